#include "core/collective.h"

#include <gtest/gtest.h>

namespace colltune {

TEST(Collective, NamesRoundTripAndIdsMatchOpenMpi) {
  for (Collective c : all_collectives()) EXPECT_EQ(parse_collective(name(c)), c);
  EXPECT_EQ(ompi_id(Collective::bcast), 7);
  EXPECT_EQ(ompi_id(Collective::gather), 9);
  EXPECT_EQ(ompi_id(Collective::reduce), 11);
  EXPECT_EQ(ompi_id(Collective::allreduce), 2);
  EXPECT_FALSE(parse_collective("bcastx").has_value());
}

TEST(Collective, ParsesListsAndRejectsUnknownNames) {
  auto list = parse_collective_list("bcast, allreduce,reduce,gather");
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[3], Collective::gather);
  EXPECT_THROW(parse_collective_list("bcast,nope"), std::invalid_argument);
  EXPECT_THROW(parse_collective_list(""), std::invalid_argument);
}

TEST(Collective, RulesKeyIsPerRankBytesTimesPForGatherFamily) {
  EXPECT_EQ(rules_key_for_osu_size(Collective::gather, 256, 4), 1024);
  EXPECT_EQ(rules_key_for_osu_size(Collective::scatter, 4096, 4), 16384);
  EXPECT_EQ(rules_key_for_osu_size(Collective::bcast, 4096, 4), 4096);
  EXPECT_EQ(rules_key_for_osu_size(Collective::barrier, 4096, 4), 0);
  EXPECT_EQ(osu_size_for_rules_key(Collective::gather, 1024, 4), 256);
}

}  // namespace colltune
