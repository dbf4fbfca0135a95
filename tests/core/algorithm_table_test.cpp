#include "core/algorithm_table.h"

#include <gtest/gtest.h>

namespace colltune {

TEST(AlgorithmTable, Builtin414MatchesOmpiInfoCounts) {
  const auto& t = AlgorithmTable::builtin_4_1();
  EXPECT_EQ(t.at(Collective::bcast).algorithm_count, 10);
  EXPECT_EQ(t.at(Collective::allreduce).algorithm_count, 7);
  EXPECT_EQ(t.at(Collective::reduce).algorithm_count, 8);
  EXPECT_EQ(t.at(Collective::gather).algorithm_count, 4);
  EXPECT_TRUE(t.at(Collective::bcast).find(2)->uses_fanout);
  EXPECT_FALSE(t.at(Collective::bcast).find(6)->uses_fanout);
  EXPECT_TRUE(t.at(Collective::allreduce).find(5)->uses_segsize);
  EXPECT_FALSE(t.at(Collective::allreduce).find(4)->uses_segsize);
  EXPECT_TRUE(t.at(Collective::gather).find(3)->uses_segsize);
}

TEST(AlgorithmTable, TwoProcOnlyUsableAtTwoRanks) {
  const auto& t = AlgorithmTable::builtin_4_1();
  auto at4 = t.usable(Collective::allgather, 4);
  auto at2 = t.usable(Collective::allgather, 2);
  EXPECT_EQ(at4.size() + 1, at2.size());
}

TEST(AlgorithmTable, ParsesOmpiInfoParsable) {
  const char* text =
      "mca:coll:tuned:version:\"mca:2.1.0\"\n"
      "mca:coll:tuned:version:\"component:4.1.4\"\n"
      "mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:0:ignore\n"
      "mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:1:basic_linear\n"
      "mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:2:chain\n"
      "mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:10:shiny_new\n"
      "mca:coll:tuned:param:coll_tuned_use_dynamic_rules:enumerator:value:1:true\n";
  auto t = AlgorithmTable::from_ompi_info(text);
  ASSERT_TRUE(t.version.has_value());
  EXPECT_EQ(t.version->to_string(), "4.1.4");
  const auto& bcast = t.at(Collective::bcast);
  EXPECT_EQ(bcast.algorithm_count, 11);
  ASSERT_EQ(bcast.algorithms.size(), 3u);
  EXPECT_TRUE(bcast.find("chain")->uses_fanout);
  EXPECT_FALSE(bcast.find(10)->uses_segsize);
  // Collectives not in the text keep the built-in entry.
  EXPECT_EQ(t.at(Collective::gather).algorithm_count, 4);
  EXPECT_THROW(AlgorithmTable::from_ompi_info("garbage\n"), std::runtime_error);
}

}  // namespace colltune
