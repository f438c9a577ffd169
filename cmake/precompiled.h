// The headers every translation unit of the library and its tests parses, precompiled once per
// target (ANATOMY_PRECOMPILED_HEADERS, CMakeLists.txt): the standard library's common headers
// and fmt. Project headers stay out, so what a file includes still says what it uses; a build
// with -DANATOMY_PRECOMPILED_HEADERS=OFF (scripts/gpu-check.sh builds that way) checks that
// every file includes what it needs without this one.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
