// colltune: tunes Open MPI's coll_tuned collective algorithms for this machine or cluster.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/app.h"

int main(int argc, char** argv) {
  CLI::App app;
  colltune::configure_app(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "colltune: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
