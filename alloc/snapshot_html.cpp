// The SVG and HTML pictures of a snapshot (see snapshot_html.h). Every segment gets a bar of the
// same width, so a 2 MiB segment's blocks are as readable as a 1 GiB one's; the label says the
// segment's size. A block thinner than a pixel is drawn one pixel wide so it stays visible.
#include "anatomy/alloc/snapshot_html.h"

#include <fmt/format.h>

#include <algorithm>

#include "anatomy/alloc/memory_summary.h"

namespace anatomy::alloc {
namespace {

constexpr int kWidth = 960;
constexpr int kLabelWidth = 250;
constexpr int kBarWidth = kWidth - kLabelWidth - 10;
constexpr int kRowHeight = 22;
constexpr int kRowGap = 8;
constexpr int kTop = 58;  // below the title and the legend

std::string xml_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* state_color(std::string_view state) {
  if (state == "active_allocated") return "#4e79a7";
  if (state == "active_pending_free") return "#f28e2b";
  if (state == "unmapped") return "url(#unmapped)";  // hatched: addresses with no memory behind
  return "#dcdcdc";
}

// The hatching of unmapped ranges: grey lines on white, unlike the solid grey of free memory.
constexpr const char* kUnmappedPattern =
    R"svg(<defs><pattern id="unmapped" width="6" height="6" patternUnits="userSpaceOnUse" )svg"
    R"svg(patternTransform="rotate(45)"><rect width="6" height="6" fill="white"/>)svg"
    R"svg(<line x1="0" y1="0" x2="0" y2="6" stroke="#9a9a9a" stroke-width="2"/></pattern></defs>)svg"
    "\n";

std::string block_title(const BlockInfo& b) {
  std::string_view state = block_state(b);
  std::string t = fmt::format("{} {}, {}", fmt::ptr(b.ptr), format_bytes(static_cast<int64_t>(b.size)), state);
  if (b.allocated || b.pending_free)
    t += fmt::format(", requested {}", format_bytes(static_cast<int64_t>(b.requested)));
  if ((b.allocated || b.pending_free) && b.op) t += fmt::format(", op {}", b.op);
  return xml_escape(t);
}

std::string legend() {
  std::string out;
  int x = 0;
  for (const char* state : {"active_allocated", "active_pending_free", "inactive", "unmapped"}) {
    out += fmt::format(R"(<rect x="{}" y="30" width="12" height="12" fill="{}" stroke="#9a9a9a" stroke-width="0.5"/>)"
                       R"(<text x="{}" y="40">{}</text>)",
                       x, state_color(state), x + 16, state);
    x += 190;
  }
  return out + "\n";
}

}  // namespace

std::string snapshot_to_svg(const MemorySnapshot& s) {
  const int height = kTop + static_cast<int>(s.segments.size()) * (kRowHeight + kRowGap) + 4;
  std::string out =
      fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" )"
                  R"(font-family="monospace" font-size="12" xml:space="preserve" style="white-space: pre">)"
                  "\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                  kWidth, height, kWidth, height);
  out += kUnmappedPattern;
  out +=
      fmt::format(R"(<text x="0" y="16" font-size="14" font-weight="bold">{}</text>)",
                  xml_escape(fmt::format("{}: {} segments, {} reserved, {} allocated", s.device.str(),
                                         s.segments.size(), format_bytes(s.stats.reserved_bytes[StatType::All].current),
                                         format_bytes(s.stats.allocated_bytes[StatType::All].current))));
  out += "\n" + legend();
  int y = kTop;
  for (const SegmentInfo& seg : s.segments) {
    const std::string label = fmt::format(
        "{} {:>10} {} s{}{}", fmt::ptr(seg.address), format_bytes(static_cast<int64_t>(seg.size)),
        seg.is_small ? "small" : "large", seg.stream, seg.pool.is_default() ? "" : fmt::format(" p{}", seg.pool.value));
    // The label has no room for more: a segment with unmapped blocks says how much on hover.
    const std::string hover =
        seg.unmapped_size == 0
            ? ""
            : fmt::format("<title>{} mapped, +{} unmapped</title>", format_bytes(static_cast<int64_t>(seg.size)),
                          format_bytes(static_cast<int64_t>(seg.unmapped_size)));
    out += fmt::format(R"(<g><text x="0" y="{}">{}{}</text>)", y + 15, xml_escape(label), hover);
    // The bar spans the segment's addresses, its unmapped blocks included.
    const auto span = static_cast<double>(seg.size + seg.unmapped_size);
    size_t offset = 0;
    for (const BlockInfo& b : seg.blocks) {
      const double x = kLabelWidth + static_cast<double>(kBarWidth) * static_cast<double>(offset) / span;
      const double w = std::max(1.0, static_cast<double>(kBarWidth) * static_cast<double>(b.size) / span);
      out += fmt::format(
          "\n  <rect data-addr=\"{}\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" "
          "stroke=\"white\" stroke-width=\"0.5\"><title>{}</title></rect>",
          reinterpret_cast<uintptr_t>(b.ptr), x, y, w, kRowHeight, state_color(block_state(b)), block_title(b));
      offset += b.size;
    }
    out += "</g>\n";
    y += kRowHeight + kRowGap;
  }
  return out + "</svg>\n";
}

std::string snapshot_to_html(const MemorySnapshot& s, size_t max_events) {
  const MemoryStats& st = s.stats;
  auto both = [](const StatArray& a) {
    return fmt::format("{} (peak {})", format_bytes(a[StatType::All].current), format_bytes(a[StatType::All].peak));
  };
  std::string out = R"(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>anatomy memory snapshot</title>
<style>
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; font-family: monospace; font-size: 12px; }
td, th { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f4f4f4; }
tr.hit td { background: #ffe9a8; }
rect.hit { stroke: black; stroke-width: 2; }
</style></head><body>
)";
  out += fmt::format("<h1>Caching allocator snapshot, {}</h1>\n", xml_escape(s.device.str()));
  out += fmt::format(
      "<p>Reserved {}; allocated {}; active {}; requested {}; non-releasable {}. "
      "{} allocations, {} segments, {} OOMs.</p>\n",
      both(st.reserved_bytes), both(st.allocated_bytes), both(st.active_bytes), both(st.requested_bytes),
      both(st.inactive_split_bytes), st.allocation[StatType::All].current, st.segment[StatType::All].current,
      st.num_ooms);
  out +=
      "<p>One bar per segment, its blocks in address order and in proportion; hover a block for its address, "
      "size, request and operator, click it to mark its events below.</p>\n";
  out += snapshot_to_svg(s);
  const size_t first = s.trace.size() > max_events ? s.trace.size() - max_events : 0;
  if (s.trace_max_entries == 0) {
    out += "<p>No events: the memory history was not recording (record_memory_history).</p>\n";
  } else {
    out += fmt::format("<h2>Last {} events (of the {} the ring keeps)</h2>\n", s.trace.size() - first,
                       s.trace_max_entries);
    out +=
        "<table><tr><th>seq</th><th>time (us)</th><th>action</th><th>address</th><th>size</th>"
        "<th>stream</th><th style=\"text-align:left\">op</th></tr>\n";
    const int64_t t0 = s.trace.empty() ? 0 : s.trace[first].time_us;
    for (size_t i = first; i < s.trace.size(); ++i) {
      const TraceEntry& e = s.trace[i];
      out += fmt::format(
          "<tr data-addr=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{:#x}</td><td>{}</td><td>{}</td>"
          "<td style=\"text-align:left\">{}</td></tr>\n",
          e.address, e.seq, e.time_us - t0, to_string(e.action), e.address, format_bytes(static_cast<int64_t>(e.size)),
          e.stream, xml_escape(e.op ? e.op : ""));
    }
    out += "</table>\n";
  }
  // Clicking a block marks it and its events; clicking an event row marks its block.
  out += R"(<script>
function mark(addr) {
  document.querySelectorAll('.hit').forEach(e => e.classList.remove('hit'));
  document.querySelectorAll('[data-addr="' + addr + '"]').forEach(e => e.classList.add('hit'));
}
document.querySelectorAll('[data-addr]').forEach(e => e.addEventListener('click', () => mark(e.dataset.addr)));
</script>
</body></html>
)";
  return out;
}

}  // namespace anatomy::alloc
