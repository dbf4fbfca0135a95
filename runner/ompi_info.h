// The questions colltune asks the machine's `ompi_info` (never through a shell).
#pragma once

#include <string>

namespace colltune {

// "4.1.4" from `ompi_info --version`; empty when the program fails or prints no version.
std::string query_ompi_version(const std::string& ompi_info);

// `ompi_info --param coll tuned --level 9 --parsable` (what the search space parses for the
// algorithm list); empty when the program fails.
std::string query_coll_tuned_params(const std::string& ompi_info);

// The folder of the system-wide MCA parameter file ("/etc/openmpi" on Debian), from
// `ompi_info --path sysconfdir --parsable`; empty when the program fails or does not say.
std::string query_ompi_sysconfdir(const std::string& ompi_info);

}  // namespace colltune
