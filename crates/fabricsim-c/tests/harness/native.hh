// What the C++ harnesses (ring.cpp, astra_ring.cpp) share: the fabric they run on and the
// native [[jobs]] ring they are checked against, through the C interface.
#ifndef FABRICSIM_HARNESS_NATIVE_HH
#define FABRICSIM_HARNESS_NATIVE_HH

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fabricsim.h"

namespace harness {

const uint64_t FOREVER = 10'000'000'000'000ULL;  // 10 s, in ps

// Exits with fabricsim's reason if `s` is FS_ERROR.
inline void check(FsStatus s, const char* what) {
  if (s == FS_ERROR) {
    std::fprintf(stderr, "%s: %s\n", what, fs_last_error());
    std::exit(2);
  }
}

// The 128-host fabric of the papers (16 leaves of 8 hosts, 1 us links), with `extra` TOML.
inline std::string fabric(const std::string& extra) {
  return "seed = 1\n[topology]\nhosts = 128\nradix = 16\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n" + extra;
}

// The JCT of fabricsim's own [[jobs]] ring allreduce of `size` bytes a rank on `hosts` (TOML), the
// fabric alone (no NCCL costs, Simple) as a driven ring is.
inline uint64_t native_jct(const std::string& hosts, uint64_t size) {
  std::string text = fabric("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\ncollective = \"allreduce\"\nalgorithm = \"ring\"\nsize = \"" + std::to_string(size) +
                            "B\"\nhosts = " + hosts + "\n");
  FsSession* s = nullptr;
  check(fs_session_new(text.c_str(), 1, &s), "fs_session_new (native)");
  check(fs_run_until(s, FOREVER), "fs_run_until");
  char* json = nullptr;
  check(fs_results_json(s, &json), "fs_results_json");
  const char* at = std::strstr(json, "\"jct_ps\":[");
  if (!at) {
    std::fprintf(stderr, "no jct_ps in the results\n");
    std::exit(2);
  }
  uint64_t jct = std::strtoull(at + std::strlen("\"jct_ps\":["), nullptr, 10);
  fs_string_free(json);
  fs_session_free(s);
  return jct;
}

}  // namespace harness

#endif
