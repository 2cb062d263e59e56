// Tests of the staged CSR kernel's slot-map choice (spk/impl/staged_swizzle.hpp).
#include "test_common.hpp"

#include <set>

#include <spk/impl/staged_swizzle.hpp>

using spk::impl::StagedSwizzle;

TEST_CASE("staged swizzle: every candidate permutes each chunk") {
  for (const StagedSwizzle s : {StagedSwizzle{5, 0}, StagedSwizzle{5, 31}, StagedSwizzle{4, 15}}) {
    for (int chunk : {128, 256, 512, 1024}) {
      std::set<int> slots;
      for (int q = 0; q < chunk; ++q) {
        const int slot = q ^ ((q >> s.shift) & s.mask);
        CHECK(slot >= 0);
        CHECK(slot < chunk);
        slots.insert(slot);
      }
      CHECK(int(slots.size()) == chunk);
    }
  }
}

TEST_CASE("staged swizzle: bank counts and the maps they choose") {
  // one lane per row: rows of 16 put every lane on two bank pairs without a map (each read of
  // 32 values costs 16 wavefronts instead of 2), rows of an odd length spread by themselves
  const long id16 = spk::impl::staged_bank_cost(16, 1, 256, {5, 0});
  const long x16 = spk::impl::staged_bank_cost(16, 1, 256, {4, 15});
  CHECK(id16 > 5 * x16);
  CHECK(spk::impl::best_staged_swizzle(16, 1, 256) == StagedSwizzle{4, 15});
  CHECK(spk::impl::best_staged_swizzle(8, 1, 256) == StagedSwizzle{5, 31});
  CHECK(spk::impl::best_staged_swizzle(48, 2, 256) == StagedSwizzle{4, 15});
  for (int len : {5, 7, 17, 27}) {
    CAPTURE(len);
    CHECK(spk::impl::best_staged_swizzle(len, 1, 256) == StagedSwizzle{5, 0});
    CHECK(spk::impl::best_staged_swizzle(len, 4, 256) == StagedSwizzle{5, 0});
  }
  // a lower bound: a read of 32 lanes costs at least 2 (values) + 1 (indices) wavefronts
  CHECK(spk::impl::staged_bank_cost(5, 1, 256, {5, 0}) >= 32 * 5 * 3);
}

TEST_CASE("staged swizzle: the cached choice equals the counted one; long rows take the rule") {
  for (int pass = 0; pass < 2; ++pass) {  // the second pass reads the cache
    for (int v : {1, 2, 4, 8, 16, 32}) {
      for (int chunk : {128, 256, 512, 1024}) {
        for (int len : {1, 2, 9, 16, 33, 64}) {
          CAPTURE(v);
          CAPTURE(chunk);
          CAPTURE(len);
          CHECK(spk::impl::choose_staged_swizzle(double(len) + 0.3, v, chunk) ==
                spk::impl::best_staged_swizzle(len, v, chunk));
        }
      }
    }
  }
  CHECK(spk::impl::choose_staged_swizzle(0.2, 1, 256) == spk::impl::best_staged_swizzle(1, 1, 256));
  CHECK(spk::impl::choose_staged_swizzle(100.0, 1, 256) == StagedSwizzle{5, 31});
  CHECK(spk::impl::choose_staged_swizzle(101.0, 1, 256) == StagedSwizzle{5, 0});
  CHECK(spk::impl::choose_staged_swizzle(100.0, 2, 256) == StagedSwizzle{5, 0});
}
