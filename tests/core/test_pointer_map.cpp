// PointerMap, the caching allocator's table of allocated blocks: inserts, finds, erases and takes agree
// with std::unordered_map over a random run that grows the table and erases from the middle of
// probe runs (where backward-shift deletion must keep every other entry reachable).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <vector>

#include "anatomy/core/pointer_map.h"

using anatomy::PointerMap;

namespace {

const void* address(size_t i) { return reinterpret_cast<const void*>(uintptr_t{0x7f0000000000} + i * 512); }

}  // namespace

TEST_CASE("pointer map: empty map finds and erases nothing") {
  PointerMap<int> m;
  CHECK(m.empty());
  CHECK(m.find(address(1)) == nullptr);
  CHECK_FALSE(m.erase(address(1)));
  CHECK(m.take(address(1)) == 0);
}

TEST_CASE("pointer map: take returns the value and removes the key") {
  PointerMap<int> m;
  m.insert(address(1), 10);
  m.insert(address(2), 20);
  CHECK(m.take(address(1)) == 10);
  CHECK(m.find(address(1)) == nullptr);
  CHECK(m.take(address(1)) == 0);  // gone: the value type's default
  CHECK(m.size() == 1);
  CHECK(*m.find(address(2)) == 20);
}

TEST_CASE("pointer map: insert, find, erase") {
  PointerMap<int> m;
  m.insert(address(1), 10);
  m.insert(address(2), 20);
  REQUIRE(m.find(address(1)) != nullptr);
  CHECK(*m.find(address(1)) == 10);
  CHECK(*m.find(address(2)) == 20);
  CHECK(m.find(address(3)) == nullptr);
  CHECK(m.size() == 2);
  CHECK(m.erase(address(1)));
  CHECK_FALSE(m.erase(address(1)));
  CHECK(m.find(address(1)) == nullptr);
  CHECK(*m.find(address(2)) == 20);
  CHECK(m.size() == 1);
}

TEST_CASE("pointer map: a random run agrees with unordered_map") {
  PointerMap<size_t> m;
  std::unordered_map<const void*, size_t> ref;
  std::mt19937_64 rng(7);
  // Few distinct keys compared with the operations, so keys come and go many times, and up to
  // 3000 live at once, so the table grows several times.
  for (int step = 0; step < 200000; ++step) {
    const size_t k = rng() % (step < 100000 ? 4000 : 300);
    const void* key = address(k);
    const bool present = ref.count(key) != 0;
    if (rng() % 2 == 0 && !present) {
      m.insert(key, k + 1);  // never 0, which take() returns for a missing key
      ref.emplace(key, k + 1);
    } else if (rng() % 2 == 0) {
      REQUIRE(m.erase(key) == present);
      ref.erase(key);
    } else {
      REQUIRE(m.take(key) == (present ? ref.at(key) : 0));
      ref.erase(key);
    }
    if (step % 1000 == 0) {
      REQUIRE(m.size() == ref.size());
      for (const auto& [p, v] : ref) {
        const size_t* found = m.find(p);
        REQUIRE(found != nullptr);
        REQUIRE(*found == v);
      }
      size_t seen = 0;
      m.for_each([&](const void* p, size_t v) {
        ++seen;
        REQUIRE(ref.at(p) == v);
      });
      REQUIRE(seen == ref.size());
    }
  }
}
