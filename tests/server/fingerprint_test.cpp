// The fingerprint read from recorded command outputs (tests/server/data/fingerprint/: real
// text captured on the development VM, with overlays for an Open MPI upgrade, HAN raised above
// tuned, a Slurm partition of one and of two nodes, and missing tools), and from this machine.
#include "campaign/fingerprint.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/ompi_version.h"
#include "runner/process.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path data(const std::string& name) {
  return fs::path(COLLTUNE_TEST_DATA_DIR) / "fingerprint" / name;
}

// The base recordings overlaid by `overlays` (first wins).
json collect(std::vector<std::string> overlays = {}, FingerprintOptions options = {}) {
  std::vector<fs::path> folders;
  for (const auto& o : overlays) folders.push_back(data(o));
  folders.push_back(data("vm-ompi-4.1.4"));
  if (options.osu_dir.empty()) options.osu_dir = "/opt/osu/libexec";
  if (options.collected_at == 0) options.collected_at = 1700000000;
  return collect_fingerprint(recorded_command_runner(folders), options);
}

const FingerprintChange* find_change(const std::vector<FingerprintChange>& changes,
                                     const std::string& field) {
  for (const auto& c : changes)
    if (c.field == field) return &c;
  return nullptr;
}

TEST(Fingerprint, ReadsTheRecordedMachine) {
  const json fp = collect();
  EXPECT_EQ(fp["schema"], 1);
  EXPECT_EQ(fp["collected_on"], "vm");
  EXPECT_EQ(fp["open_mpi"]["version"], "4.1.4");
  const auto& bcast = fp["coll_tuned"]["algorithms"]["bcast"];
  ASSERT_EQ(bcast.size(), 9u);
  EXPECT_EQ(bcast["6"], "binomial");
  EXPECT_EQ(fp["coll_tuned"]["algorithms"]["allreduce"]["6"], "rabenseifner");
  EXPECT_EQ(fp["coll_components"]["tuned"]["priority"], 30);
  EXPECT_EQ(fp["coll_components"]["tuned"]["active"], true);
  EXPECT_EQ(fp["coll_components"]["han"]["active"], false);  // priority 0 in 4.1.4
  EXPECT_EQ(fp["coll_selection"], "");
  EXPECT_EQ(fp["tuned_preempted_by"], json::array());
  EXPECT_EQ(fp["osu"]["version"], "5.6.2-colltune");
  EXPECT_EQ(fp["cluster"]["scheduler"], "none");
  EXPECT_EQ(fp["cluster"]["node_count"], 1);
  ASSERT_EQ(fp["node_types"].size(), 1u);
  const auto& type = fp["node_types"].begin().value();
  EXPECT_EQ(fp["node_types"].begin().key(), "2cpu 1:2:1");
  EXPECT_EQ(type["cpus"], 2);
  EXPECT_EQ(type["cpu_model"], "AMD EPYC");
  EXPECT_EQ(type["topology"]["PU"], 2);
  EXPECT_EQ(type["topology"]["Core"], 2);
  EXPECT_EQ(type["topology"]["L3_size"], "32MB");
  EXPECT_EQ(type["topology"]["net_devices"], json::array({"eth0"}));
  EXPECT_EQ(type["kernel"], "6.18.44-fc-v595");
  EXPECT_EQ(type["memory_mb"], 24684096 / 1024);
  EXPECT_EQ(fp["network"]["ibverbs"], json::object());  // no device (and said so)
  EXPECT_EQ(fp["network"]["ucx"]["version"], "1.13.1");
  EXPECT_EQ(fp["network"]["interfaces"], (json{{"eth0", {{"mtu", 1400}, {"link", "ether"}}}}));
  EXPECT_TRUE(std::find(fp["network"]["ucx"]["transports"].begin(),
                        fp["network"]["ucx"]["transports"].end(),
                        "tcp/eth0") != fp["network"]["ucx"]["transports"].end());
  EXPECT_FALSE(fp["network"]["libfabric"].empty());
  EXPECT_EQ(fp["unknown"], json::object()) << fp["unknown"].dump();
  EXPECT_EQ(fp["hash"].get<std::string>().size(), 64u);
  EXPECT_EQ(fp["hash"], fingerprint_hash(fp));
  const std::string text = format_fingerprint(fp);
  EXPECT_NE(text.find("Open MPI:       4.1.4"), std::string::npos) << text;
  EXPECT_NE(text.find("interfaces eth0 (mtu 1400)"), std::string::npos) << text;
}

TEST(Fingerprint, InterfacesThatAreUpWithoutLoopback) {
  // `ip -o link show` inside a virtual node of slurm/dev-cluster, plus a down and an IB link.
  const std::string text =
      "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group "
      "default qlen 1000\\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n"
      "2: ct0@if7: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode "
      "DEFAULT group default qlen 1000\\    link/ether 5a:1e:00:11:22:33 brd ff:ff:ff:ff:ff:ff "
      "link-netnsid 0\n"
      "3: ifb0: <BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN\\    link/ether "
      "96:d5:9c:92:98:2c\n"
      "4: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 qdisc mq state UP\\    link/infiniband "
      "80:00\n";
  const json links = parse_ip_links(text);
  EXPECT_EQ(links, (json{{"ct0", {{"mtu", 1500}, {"link", "ether"}}},
                         {"ib0", {{"mtu", 2044}, {"link", "infiniband"}}}}))
      << links.dump();
  EXPECT_TRUE(is_relevant_field("network.interfaces.ct0.mtu"));
}

TEST(Fingerprint, NoChangeMeansSameHashAndNoRelevantDifference) {
  const json a = collect({}, {.collected_at = 1700000000});
  const json b = collect({}, {.collected_at = 1800000000});
  EXPECT_EQ(a["hash"], b["hash"]);
  const auto changes = diff_fingerprints(a, b);
  EXPECT_TRUE(changes.empty()) << format_changes(changes);
  EXPECT_FALSE(any_relevant(changes));
}

TEST(Fingerprint, OpenMpiUpgradeIsRelevantAndNamed) {
  const json before = collect();
  const json after = collect({"ompi-4.1.6"});
  EXPECT_NE(before["hash"], after["hash"]);
  const auto changes = diff_fingerprints(before, after);
  ASSERT_EQ(changes.size(), 1u) << format_changes(changes);
  EXPECT_EQ(changes[0].field, "open_mpi.version");
  EXPECT_TRUE(changes[0].relevant);
  EXPECT_EQ(format_changes(changes), "open_mpi.version: 4.1.4 -> 4.1.6\n");
}

TEST(Fingerprint, ComponentThatPreemptsTunedIsRelevant) {
  const auto changes = diff_fingerprints(collect(), collect({"han-priority-40"}));
  const auto* priority = find_change(changes, "coll_components.han.priority");
  ASSERT_NE(priority, nullptr) << format_changes(changes);
  EXPECT_EQ(priority->before, 0);
  EXPECT_EQ(priority->after, 40);
  EXPECT_TRUE(priority->relevant);
  const auto* preempt = find_change(changes, "tuned_preempted_by");
  ASSERT_NE(preempt, nullptr);
  EXPECT_EQ(preempt->after, json::array({"han"}));
  EXPECT_TRUE(any_relevant(changes));
}

TEST(Fingerprint, SlurmPartitionNodesAndTheirGrowth) {
  const json one = collect({"slurm-1node"});
  EXPECT_EQ(one["cluster"]["scheduler"], "slurm");
  EXPECT_EQ(one["cluster"]["node_count"], 1);
  ASSERT_TRUE(one["node_types"].contains("8cpu 1:8:1")) << one["node_types"].dump();
  const auto& type = one["node_types"]["8cpu 1:8:1"];
  EXPECT_EQ(type["memory_mb"], 21695);
  EXPECT_EQ(type["sampled_node"], "vm");
  EXPECT_EQ(type["cpu_model"], "AMD EPYC");  // lscpu of the sampled node

  const json two = collect({"slurm-2nodes"});
  const auto changes = diff_fingerprints(one, two);
  const std::string text = format_changes(changes);
  const auto* count = find_change(changes, "cluster.node_count");
  ASSERT_NE(count, nullptr) << text;
  EXPECT_TRUE(count->relevant);
  EXPECT_NE(text.find("cluster.node_count: 1 -> 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("node_types.8cpu 1:8:1.nodes: 1 -> 2\n"), std::string::npos) << text;
  const auto* name = find_change(changes, "cluster.nodes.vm2");
  ASSERT_NE(name, nullptr);
  EXPECT_FALSE(name->relevant);  // node names alone are not a reason

  // Going from this machine to the Slurm partition changes the node types.
  EXPECT_TRUE(any_relevant(diff_fingerprints(collect(), one)));
}

TEST(Fingerprint, MissingToolsAreUnknownNotFatalAndNeverTrigger) {
  const json fp = collect({"tools-missing"});
  EXPECT_EQ(fp["open_mpi"]["version"], "4.1.4");
  const auto& type = fp["node_types"]["2cpu 1:2:1"];
  EXPECT_EQ(type["topology"], "unknown");
  EXPECT_EQ(fp["network"]["ucx"], "unknown");
  EXPECT_EQ(fp["network"]["ibverbs"], "unknown");
  EXPECT_NE(fp["unknown"]["node_types.2cpu 1:2:1.topology"].get<std::string>().find("not found"),
            std::string::npos);
  const auto changes = diff_fingerprints(collect(), fp);
  EXPECT_FALSE(changes.empty());
  EXPECT_FALSE(any_relevant(changes)) << format_changes(changes);
  EXPECT_NE(format_changes(changes).find("network.ucx: "), std::string::npos);
}

TEST(Fingerprint, NothingAtAllIsStillAFingerprint) {
  const auto nothing = [](const std::vector<std::string>& argv, const std::string&) {
    return CommandOutput{false, 127, "", "", argv[0] + ": not found"};
  };
  const json fp = collect_fingerprint(nothing, {});
  EXPECT_EQ(fp["open_mpi"]["version"], "unknown");
  EXPECT_EQ(fp["coll_tuned"], "unknown");
  EXPECT_FALSE(fp["unknown"].empty());
  EXPECT_EQ(fp["hash"].get<std::string>().size(), 64u);
}

TEST(Fingerprint, KernelAndHostAreRecordedButNotRelevant) {
  const json before = collect();
  json after = before;
  after["node_types"]["2cpu 1:2:1"]["kernel"] = "6.19.0";
  after["collected_on"] = "other";
  after["hash"] = fingerprint_hash(after);
  EXPECT_EQ(before["hash"], after["hash"]);
  const auto changes = diff_fingerprints(before, after);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_FALSE(any_relevant(changes));
  after["node_types"]["2cpu 1:2:1"]["cpu_model"] = "Intel Xeon";
  EXPECT_TRUE(any_relevant(diff_fingerprints(before, after)));
  EXPECT_NE(fingerprint_hash(after), before["hash"]);
}

TEST(Fingerprint, RelevanceOfFields) {
  EXPECT_TRUE(is_relevant_field("open_mpi.version"));
  EXPECT_TRUE(is_relevant_field("coll_tuned.algorithms.bcast.6"));
  EXPECT_TRUE(is_relevant_field("coll_components.hcoll.priority"));
  EXPECT_TRUE(is_relevant_field("cluster.node_count"));
  EXPECT_TRUE(is_relevant_field("node_types.16cpu 2:8:1"));
  EXPECT_TRUE(is_relevant_field("node_types.x.topology.L3_size"));
  EXPECT_TRUE(is_relevant_field("network.ibverbs.mlx5_0.fw_ver"));
  EXPECT_TRUE(is_relevant_field("model.profile.latency_us"));
  EXPECT_FALSE(is_relevant_field("collected_on"));
  EXPECT_FALSE(is_relevant_field("osu.version"));
  EXPECT_FALSE(is_relevant_field("cluster.nodes.n17"));
  EXPECT_FALSE(is_relevant_field("node_types.x.kernel"));
  EXPECT_FALSE(is_relevant_field("node_types.x.memory_mb"));
}

TEST(Fingerprint, ModelFingerprintFollowsTheModel) {
  BackendInfo info;
  info.backend = "sim";
  info.host = "sim:local";
  info.ompi_version = "4.1.4";
  info.extra = {{"profile", {{"name", "local"}, {"bandwidth_gbs", 10.0}}}, {"seed", 1}};
  const json a = model_fingerprint(info);
  info.extra["seed"] = 2;  // noise seed: not the landscape
  EXPECT_EQ(model_fingerprint(info)["hash"], a["hash"]);
  info.extra["profile"]["bandwidth_gbs"] = 12.5;
  const auto changes = diff_fingerprints(a, model_fingerprint(info));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].field, "model.profile.bandwidth_gbs");
  EXPECT_TRUE(changes[0].relevant);
}

TEST(Fingerprint, RecordedRunnerMatchesByProgramNameAndNode) {
  auto run = recorded_command_runner({data("vm-ompi-4.1.4")});
  EXPECT_TRUE(run({"/usr/local/bin/osu_bcast", "--version"}, "").ok());
  EXPECT_FALSE(run({"ompi_info", "--all"}, "").found);
  EXPECT_THROW(recorded_command_runner({data("no-such-folder")}), std::runtime_error);
}

// This machine, live: the version agrees with ompi_info, and nothing needed is unknown.
TEST(Fingerprint, ThisMachine) {
  FingerprintOptions options;
  options.scheduler = "none";
  const json fp = collect_fingerprint(local_command_runner(30), options);
  const auto version = run_process({"ompi_info", "--version"}, {.timeout_s = 30});
  const auto expected = parse_ompi_version(version.stdout_text);
  ASSERT_TRUE(expected.has_value());
  EXPECT_EQ(fp["open_mpi"]["version"], expected->to_string());
  EXPECT_TRUE(fp["coll_tuned"]["algorithms"].contains("bcast"));
  EXPECT_EQ(fp["coll_components"]["tuned"]["active"], true);
  EXPECT_EQ(fp["cluster"]["node_count"], 1);
  // Same machine a moment later: no relevant difference.
  const json again = collect_fingerprint(local_command_runner(30), options);
  EXPECT_FALSE(any_relevant(diff_fingerprints(fp, again)))
      << format_changes(diff_fingerprints(fp, again));
}

}  // namespace
}  // namespace colltune
