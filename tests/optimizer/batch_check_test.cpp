// Whether a run joins a batch under a node-second budget (optimizer/batch_check.h).
#include "optimizer/batch_check.h"

#include <gtest/gtest.h>

namespace colltune {
namespace {

TEST(BatchCheck, TheFirstRunJoinsTheOthersWhileTheBatchFitsAtItsPricesTimesTheFactor) {
  BatchCheck batch(/*left=*/100, /*factor=*/2, /*timed_sizes=*/{4, 64}, /*blind_factor=*/3,
                   /*left_total=*/100);
  EXPECT_TRUE(batch.admits(64, 500));  // a batch's first run: the caller checked its price
  batch.add(4, 20);                    // 40 at twice its price
  EXPECT_TRUE(batch.admits(64, 30));   // 40 + 60 = 100
  EXPECT_FALSE(batch.admits(64, 31));  // 40 + 62 > 100, though 20 + 31 fits at the prices
  batch.add(64, 30);
  EXPECT_FALSE(batch.admits(4, 0.1));  // full at the factor
}

TEST(BatchCheck, ASizeNeverRunTakesASecondRunOnlyWhileItsRunsFitWhatIsLeftAtTheBlindFactor) {
  // Sizes 4 and 16 have runs that reported their seconds, 64 and 256 none: prices there are
  // extrapolations.
  BatchCheck batch(/*left=*/1000, /*factor=*/1, /*timed_sizes=*/{4, 16}, /*blind_factor=*/3,
                   /*left_total=*/120);
  batch.add(4, 1);
  EXPECT_TRUE(batch.admits(64, 10));  // the size's one run in the batch
  batch.add(64, 10);
  EXPECT_TRUE(batch.admits(64, 20));  // 3 x (10 + 20) = 90 <= 120
  batch.add(64, 20);
  EXPECT_TRUE(batch.admits(256, 50));  // a new size's first run: only the batch's prices count
  batch.add(256, 50);
  EXPECT_FALSE(batch.admits(64, 1));  // 3 x (10 + 20 + 50 + 1) > 120
  EXPECT_FALSE(batch.admits(256, 1));
  EXPECT_TRUE(batch.admits(16, 500));  // a size with timed runs: the batch's prices alone

  // A large blind factor: one run per size never run, whatever is left (the rule of 2026-11-27).
  BatchCheck strict(1000, 1, {4}, 1e12, 1e9);
  strict.add(64, 1);
  EXPECT_FALSE(strict.admits(64, 1));
  EXPECT_TRUE(strict.admits(256, 1));
  // A blind factor of 1 trusts the prices.
  BatchCheck trusting(1000, 1, {4}, 1, 30);
  trusting.add(64, 10);
  EXPECT_TRUE(trusting.admits(64, 20));
  EXPECT_FALSE(trusting.admits(64, 21));
}

}  // namespace
}  // namespace colltune
