// Differential test against the real thing: Open MPI 4.1.4's own rules reader and lookup
// (ompi_coll_tuned_read_rules_config_file, ompi_coll_tuned_get_com_rule_ptr,
// ompi_coll_tuned_get_target_method_params), exported by the installed mca_coll_tuned.so and
// called in a forked child per input (Open MPI's reader keeps static state and may crash on
// absurd counts). For thousands of generated and mutated files: the validator must agree with
// Open MPI on "loaded or ignored", and for loaded files our lookup must return exactly what
// Open MPI's does on a grid of communicator and message sizes.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "random_models.h"
#include "rules/rules_reader.h"
#include "rules/rules_writer.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

using ReadFn = int (*)(char*, void**, int);
using ComRuleFn = void* (*)(void*, int, int);
using TargetFn = int (*)(void*, std::size_t, int*, int*, int*);
using FreeFn = int (*)(void*, int);

// Finds mca_coll_tuned.so next to the libmpi this test is linked with.
std::string tuned_component_path() {
  if (const char* env = std::getenv("COLLTUNE_OMPI_TUNED_COMPONENT")) return env;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&MPI_Init), &info) == 0 || !info.dli_fname) return {};
  fs::path libdir = fs::path(info.dli_fname).parent_path();
  for (const char* sub : {"openmpi3", "openmpi", "openmpi/lib/openmpi3", "../openmpi/lib/openmpi3"})
    if (fs::exists(libdir / sub / "mca_coll_tuned.so"))
      return (libdir / sub / "mca_coll_tuned.so").string();
  return {};
}

struct Probe {
  int coll, comm_size;
  std::int64_t key;
};
struct Answer {
  int alg = 0, faninout = 0, segsize = 0, max_requests = 0;
  bool operator==(const Answer&) const = default;
};
struct OracleResult {
  bool crashed = false;
  bool loaded = false;
  std::vector<Answer> answers;
};

class Oracle {
 public:
  bool load() {
    std::string path = tuned_component_path();
    if (path.empty()) return false;
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) return false;
    read_ = reinterpret_cast<ReadFn>(dlsym(handle_, "ompi_coll_tuned_read_rules_config_file"));
    com_ = reinterpret_cast<ComRuleFn>(dlsym(handle_, "ompi_coll_tuned_get_com_rule_ptr"));
    target_ =
        reinterpret_cast<TargetFn>(dlsym(handle_, "ompi_coll_tuned_get_target_method_params"));
    free_ = reinterpret_cast<FreeFn>(dlsym(handle_, "ompi_coll_tuned_free_all_rules"));
    return read_ && com_ && target_ && free_;
  }

  // Runs Open MPI's reader on `path` in a child process and asks it every probe.
  OracleResult ask(const std::string& path, const std::vector<Probe>& probes) {
    int fds[2];
    if (pipe(fds) != 0) return {true};
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      void* rules = nullptr;
      int rc = read_(const_cast<char*>(path.c_str()), &rules, 22);
      std::vector<int> out{rc >= 0 ? 1 : 0};
      if (rc >= 0) {
        for (const Probe& p : probes) {
          Answer a;
          void* com = com_(rules, p.coll, p.comm_size);
          a.alg = target_(com, static_cast<std::size_t>(p.key), &a.faninout, &a.segsize,
                          &a.max_requests);
          out.insert(out.end(), {a.alg, a.faninout, a.segsize, a.max_requests});
        }
      }
      std::size_t bytes = out.size() * sizeof(int);
      const char* data = reinterpret_cast<const char*>(out.data());
      while (bytes > 0) {
        ssize_t n = write(fds[1], data, bytes);
        if (n <= 0) _exit(3);
        data += n;
        bytes -= static_cast<std::size_t>(n);
      }
      _exit(0);
    }
    close(fds[1]);
    std::vector<int> in;
    int buffer[1024];
    ssize_t n;
    std::string raw;
    while ((n = read(fds[0], buffer, sizeof buffer)) > 0)
      raw.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    OracleResult result;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || raw.size() < sizeof(int)) {
      result.crashed = true;
      return result;
    }
    in.resize(raw.size() / sizeof(int));
    std::memcpy(in.data(), raw.data(), in.size() * sizeof(int));
    result.loaded = in[0] == 1;
    for (std::size_t i = 1; i + 3 < in.size(); i += 4)
      result.answers.push_back({in[i], in[i + 1], in[i + 2], in[i + 3]});
    return result;
  }

 private:
  void* handle_ = nullptr;
  ReadFn read_ = nullptr;
  ComRuleFn com_ = nullptr;
  TargetFn target_ = nullptr;
  FreeFn free_ = nullptr;
};

// Communicator and message sizes around every boundary the model has, plus fixed points.
std::vector<Probe> probes_for(const RulesModel& m) {
  std::set<int> colls{7, 2};
  std::set<int> sizes{1, 2, 3, 4, 8, 63, 64, 65, 1000};
  std::set<std::int64_t> keys{0, 1, 4, 1024, 65536, 1 << 20, 1LL << 40};
  for (const auto& c : m.collectives) {
    colls.insert(c.collective_id);
    for (const auto& b : c.blocks) {
      for (int d : {-1, 0, 1})
        if (b.comm_size + d >= 0 && b.comm_size < (1 << 30)) sizes.insert(b.comm_size + d);
      for (const auto& r : b.rules)
        for (int d : {-1, 0, 1})
          if (r.msg_size + d >= 0) keys.insert(r.msg_size + d);
    }
  }
  // Keep the grid small (the child answers through a pipe): every boundary of every block of
  // the first collectives, fixed points for the others.
  std::vector<Probe> probes;
  for (int c : colls)
    for (int p : sizes)
      for (std::int64_t k : keys) probes.push_back({c, p, k});
  if (probes.size() > 2000) {
    std::vector<Probe> sampled;
    std::size_t step = probes.size() / 2000 + 1;
    for (std::size_t i = 0; i < probes.size(); i += step) sampled.push_back(probes[i]);
    return sampled;
  }
  return probes;
}

Answer ours(const RulesModel& m, const Probe& p) {
  auto match = lookup_rule(m, p.coll, p.comm_size, p.key);
  if (!match || !match->rule_index) return {};
  return {match->rule.algorithm, match->rule.fanout, match->rule.segsize, match->rule.max_requests};
}

class OmpiOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!oracle_.load()) GTEST_SKIP() << "mca_coll_tuned.so of Open MPI not found";
    std::string templ = (fs::temp_directory_path() / "colltune-oracle-XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Compares one input; returns false (after recording a failure) on disagreement.
  bool agree(const std::string& text, const std::string& label) {
    fs::path file = dir_ / "rules.conf";
    {
      std::ofstream out(file, std::ios::binary);
      out << text;
    }
    RulesReadResult mine = read_rules_text(text, RulesDialect::ompi_4_1);
    std::vector<Probe> probes = mine.loaded ? probes_for(mine.model) : std::vector<Probe>{};
    OracleResult real = oracle_.ask(file.string(), probes);
    ++cases_;
    if (real.crashed) {
      ++crashes_;
      return true;  // Open MPI itself would crash: nothing to agree with
    }
    if (real.loaded != mine.loaded) {
      ADD_FAILURE() << label << ": Open MPI " << (real.loaded ? "loads" : "ignores")
                    << " the file, the validator says "
                    << (mine.loaded ? "loaded" : "ignored: " + mine.reason) << "\n---\n"
                    << text << "\n---";
      return false;
    }
    if (real.loaded) {
      ++loaded_;
      for (std::size_t i = 0; i < probes.size(); ++i) {
        Answer a = ours(mine.model, probes[i]);
        if (!(a == real.answers[i])) {
          ADD_FAILURE() << label << ": lookup coll " << probes[i].coll << " P "
                        << probes[i].comm_size << " key " << probes[i].key << ": Open MPI alg "
                        << real.answers[i].alg << " fan " << real.answers[i].faninout << " seg "
                        << real.answers[i].segsize << ", ours alg " << a.alg << " fan "
                        << a.faninout << " seg " << a.segsize << "\n---\n"
                        << text << "\n---";
          return false;
        }
      }
      lookups_ += probes.size();
    }
    return true;
  }

  Oracle oracle_;
  fs::path dir_;
  int cases_ = 0, loaded_ = 0, crashes_ = 0;
  std::size_t lookups_ = 0;
};

const char* kHandWritten[] = {
    "",
    "0\n",
    "1 7 1 4 1 0 1 0 0\n",
    "1 7 1 4 1 010 1 0 0\n",
    "1 7 1 4 2 0 1 0 0 010 6 0 0\n",
    "1 7 1 4 2 0 1 0 0 0x10 6 0 0x100\n",
    "1 7 1 4 1 0 08 0\n",
    "1 7 1 4 1 0 09 0 0\n",
    "1 bcast7 1 P4 1\n0 alg=1 fan0 seg0\n",
    "1 7 1 4 1e5 1 0 0\n",
    "1 7 1 4 1 0 1 0 0 # comment 5 6\n",
    "# c\n1 # one\n# 99\n7 1 4 1 0 #x 5\n1 0 0\n",
    "rule-file-version-2\n1\n7\n1\n4\n1\n0 1 0 0 0\n",
    "rule-file-version-1\n1 7 1 4 1 0 1 0 0\n",
    "1\n7\n1\n4\n2\n8 1 0 0\n1024 6 0 0\n",
    "1\n7\n1\n4\n1\n0 -1 0 0\n",
    "1\n22\n1\n4\n1\n0 1 0 0\n",
    "1\n21\n1\n4\n1\n0 1 0 0\n",
    "23\n",
    "22\n",
    "1\n7\n1\n4\n1\n0 1 0\n",
    "2\n7\n1\n4\n1\n0 1 0 0\n",
    "1\n7 1 4 1 0 1 0 0\n2 1 4 1 0 3 0 0\n",
    "1 7 1 4 1 0 1 0 0\nthe end\n",
    "1\r\n7\r\n1\r\n4\r\n1\r\n0 1 0 0\r\n",
    "2 7 0 2 1 4 0\n",
    "1 7 1 4 1 0 4294967297 0 0\n",
    "1 7 1 4294967300 1 0 1 0 0\n",
    "1 7 3 2 1 0 1 0 0 64 1 0 6 0 0 32 1 0 5 0 0\n",
    "1 7 1 2 3 0 1 0 0 8192 6 0 0 1024 5 0 0\n",
    "2 7 1 2 1 0 1 0 0 7 1 2 1 0 6 0 0\n",
    "1 7 1 4 1 +0 +1 0 0\n",
    "1 7 1 4 1 - 0 1 0 0\n",
    "1 7 1 4 1 0 1 0 0x\n",
    "1 7 1 4 1 0 1 0 0xg\n",
    "1 7 1 4 1 0 1.5 0 0\n",
    "{\"collectives\": {}}\n",
    "1 7 1 4 1 0 1 0 0\0 5\n",
    "-0 \n",
    "1 7 1 8 1 0 1 0 0\n",
};

TEST_F(OmpiOracle, HandWrittenTrickyFiles) {
  for (std::size_t i = 0; i < std::size(kHandWritten); ++i) {
    std::string text = kHandWritten[i];
    if (i == std::size(kHandWritten) - 3) text = std::string("1 7 1 4 1 0 1 0 0\0 5\n", 21);
    agree(text, "hand-written #" + std::to_string(i));
  }
  EXPECT_EQ(crashes_, 0);
}

TEST_F(OmpiOracle, WrittenFilesAndTheirMutations) {
  Rng rng(424242);
  testing::RandomModelShape shape;
  shape.canonical = false;
  shape.allow_duplicates = true;
  shape.max_collectives = 3;
  shape.max_blocks = 3;
  shape.max_rules = 4;
  static const std::vector<std::string> kInserts{"0",
                                                 "1",
                                                 "7",
                                                 "9",
                                                 "-",
                                                 "+",
                                                 "x",
                                                 "0x",
                                                 "#",
                                                 "\n",
                                                 " ",
                                                 "a",
                                                 "e",
                                                 ".",
                                                 "08",
                                                 "010",
                                                 "rule-file-version-2\n",
                                                 "-1",
                                                 "22",
                                                 "99999",
                                                 "#x\n"};
  int disagreements = 0;
  for (int i = 0; i < 300 && disagreements < 5; ++i) {
    RulesModel m = testing::random_model(rng, shape);
    RulesWriteOptions options;
    options.annotate = rng.below(2) == 0;
    std::string text = write_rules(m, RulesFormat::classic_v1, options);
    if (!agree(text, "written #" + std::to_string(i))) ++disagreements;
    for (int k = 0; k < 3; ++k) {
      std::string mutated = text;
      std::size_t pos = rng.below(mutated.size() + 1);
      switch (rng.below(4)) {
        case 0:  // delete a few characters
          mutated.erase(pos, 1 + rng.below(3));
          break;
        case 1:  // insert something tricky
          mutated.insert(pos, kInserts[rng.below(kInserts.size())]);
          break;
        case 2:  // truncate
          mutated.resize(pos);
          break;
        default:  // replace a character with a digit
          if (pos < mutated.size()) mutated[pos] = static_cast<char>('0' + rng.below(10));
      }
      if (!agree(mutated, "mutation " + std::to_string(i) + "." + std::to_string(k)))
        ++disagreements;
    }
  }
  RecordProperty("cases", cases_);
  RecordProperty("loaded", loaded_);
  std::printf(
      "oracle: %d files (%d loaded by Open MPI, %d crashed its reader), %zu lookups "
      "compared\n",
      cases_, loaded_, crashes_, lookups_);
  EXPECT_GT(loaded_, cases_ / 4);
  EXPECT_LT(loaded_, cases_);
}

}  // namespace
}  // namespace colltune
