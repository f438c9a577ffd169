// json_string: text as a JSON string literal, quotes included, for the hand-written JSON writers
// (the allocator's snapshot, the profiler's trace).
#pragma once

#include <string>
#include <string_view>

namespace anatomy {

std::string json_string(std::string_view text);

}  // namespace anatomy
