// Running one case and judging it. A call either succeeds, and its results pass the checks of
// checks.h and its operator's kind (catalogue.h), or throws an anatomy::Error (not
// InternalError) and leaves every input as it was. Anything else is a finding: another
// exception type, a changed input, a result that aliases what it must not, bad metadata, a
// lost or malformed gradient. Crashes and sanitizer reports end the process (main.cpp).
#pragma once

#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "case.h"
#include "catalogue.h"

namespace anatomy_fuzz {

struct Outcome {
  enum class Status { Ok, Error, Finding } status = Status::Ok;
  std::string what;  // the finding, or the typed error's message
  std::string kind;  // the finding's class, for grouping: "metadata", "input changed", ...
  size_t call = 0;   // which call of the chain
};

// One case, call by call: the random driver draws each next call from the previous result.
class CaseRun {
 public:
  CaseRun();  // seeds the engine's generator, so rand/randn replay too
  // Runs and checks one call (the first, or one chained after the last). After an Error or a
  // Finding the case is over.
  Outcome step(const Call& call);
  // After the last call: the gradient checks, when an input requires grad.
  Outcome finish();
  // The last call's first result, which a chained call takes as self.
  const anatomy::Tensor& last() const { return last_.at(0); }
  bool has_last() const { return !last_.empty() && last_[0].defined(); }

 private:
  Outcome finding(std::string kind, std::string what) const;

  std::vector<anatomy::Tensor> last_;
  std::vector<anatomy::Tensor> leaves_;  // inputs that require grad
  anatomy::Tensor root_;                 // the first call's self
  // Every call so far was a View, and none after the first an as_strided (which may reach
  // storage outside its self, where no gradient flows): the gradient oracle applies.
  bool views_only_ = true;
  bool wrote_ = false;  // a call wrote in place (backward may then refuse)
  size_t calls_ = 0;
};

// A whole case, with its expectation ("=> error", "=> ok") checked.
Outcome run_case(const Case& c);

// The name of the exception type in flight, demangled.
std::string current_exception_type();

}  // namespace anatomy_fuzz
