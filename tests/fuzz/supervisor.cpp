// Running cases in a supervised child (supervisor.h).
#include "supervisor.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <sstream>

// Huge requests must come back as nullptr (the engine's OutOfMemoryError), not abort the run
// as ASan does by default; and none may really take gigabytes, so that a size that slips past a
// check cannot exhaust the machine. ASAN_OPTIONS in the environment still override these.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1:max_allocation_size_mb=1024"; }

namespace anatomy_fuzz {
namespace {

struct Shared {
  Tally tally;
  uint64_t seed_index;
  uint64_t iteration;
  char op[64];
  size_t length;
  char text[16384];
};

// Mapped before the first fork, so parent and children see the same page.
Shared* shared() {
  static Shared* s = [] {
    void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("anatomy_fuzz: mmap");
      std::exit(2);
    }
    return static_cast<Shared*>(p);  // anonymous memory starts zeroed
  }();
  return s;
}

std::string read_all(std::FILE* f) {
  std::string out;
  std::rewind(f);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  return out;
}

// The report without ASan's note for each allocation it refused (the engine then raises
// OutOfMemoryError, as it should), and the line that says where a crash happened.
void read_report(const std::string& raw, ChildEnd& end) {
  std::istringstream in(raw);
  std::string line, asan_kind;
  while (std::getline(in, line)) {
    if (line.find("AddressSanitizer failed to allocate") != std::string::npos) continue;
    end.report += line + "\n";
    if (!end.where.empty()) continue;
    if (size_t k = line.find(" runtime error:"); k != std::string::npos) {
      end.where = line.substr(0, k);  // file:line:col of UBSan's report
    } else if (size_t e = line.find("ERROR: AddressSanitizer: "); e != std::string::npos) {
      asan_kind = line.substr(e + 25, line.find(' ', e + 25) - (e + 25));
    } else if (!asan_kind.empty() && line.find(" in ") != std::string::npos &&
               (line.find("../") != std::string::npos || line.find("anatomy/") != std::string::npos)) {
      end.where = asan_kind + " at" + line.substr(line.find(" in ") + 3);  // the first frame in anatomy's code
    } else if (line.rfind("terminate called", 0) == 0) {
      end.where = line;
    }
  }
}

}  // namespace

Tally& tally() { return shared()->tally; }

bool Tally::first_time(const std::string& key) {
  const uint64_t h = std::hash<std::string>{}(key);
  if (std::find(reported, reported + nreported, h) != reported + nreported) return false;
  if (nreported < std::size(reported)) reported[nreported++] = h;
  return true;
}

void set_progress(uint64_t seed_index, uint64_t iteration, const std::string& op, const std::string& current) {
  Shared* s = shared();
  s->seed_index = seed_index;
  s->iteration = iteration;
  std::snprintf(s->op, sizeof s->op, "%s", op.c_str());
  s->length = std::min(current.size(), sizeof(s->text));
  std::memcpy(s->text, current.data(), s->length);
}

void case_time_limit(unsigned seconds) { alarm(seconds); }

ChildEnd run_supervised(const std::function<int()>& child) {
  Shared* s = shared();
  s->seed_index = s->iteration = s->length = 0;
  s->op[0] = '\0';
  std::FILE* err = std::tmpfile();
  if (!err) {
    std::perror("anatomy_fuzz: tmpfile");
    std::exit(2);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("anatomy_fuzz: fork");
    std::exit(2);
  }
  if (pid == 0) {
    signal(SIGALRM, SIG_DFL);
    dup2(fileno(err), 2);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines printed before a crash must not be lost
    const int status = child();
    std::fflush(stdout);
    std::fflush(stderr);
    // exit, not _exit: LeakSanitizer's check runs at exit, and a leak is a finding too.
    std::exit(status);
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) {
      std::perror("anatomy_fuzz: waitpid");
      std::exit(2);
    }
  }
  ChildEnd end;
  read_report(read_all(err), end);
  std::fclose(err);
  end.progress = {s->seed_index, s->iteration, s->op, std::string(s->text, s->length)};
  if (WIFSIGNALED(wstatus)) {
    end.crashed = true;
    const int sig = WTERMSIG(wstatus);
    end.how = sig == SIGALRM ? std::string("timed out") : fmt::format("killed by signal {} ({})", sig, strsignal(sig));
  } else {
    end.status = WEXITSTATUS(wstatus);
    if (end.status != kClean && end.status != kFindings && end.status != kBadInput) {
      end.crashed = true;
      end.how = fmt::format("exit status {} (a sanitizer report, or an abort)", end.status);
    }
  }
  if (end.crashed && end.where.empty()) end.where = end.how + " in " + end.progress.op;
  return end;
}

}  // namespace anatomy_fuzz
