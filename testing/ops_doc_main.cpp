// Prints the generated part of docs/ops.md (scripts/update-ops-doc.sh splices it in).
#include <cstdio>

#include "anatomy/testing/op_table.h"

int main() {
  std::fputs(anatomy::testing::render_ops_markdown().c_str(), stdout);
  return 0;
}
