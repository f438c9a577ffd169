// The closest valid name to a mistyped one, for gpu-anatomy's "did you mean" hints.
#pragma once

#include <string>
#include <vector>

namespace anatomy::tools {

// The candidate with the smallest edit distance to `word` (insertions, deletions, substitutions),
// or "" when even that one is too far to be a typo: more than a third of the longer name.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace anatomy::tools
