// The few types of ASTRA-sim's astra-sim/system/Common.hh that its network API uses, declared
// here so that the fabricsim backend (crates/fabricsim-c/astra-sim) compiles and is tested in
// CI without ASTRA-sim. A real build uses ASTRA-sim's own headers instead (docs/embedding.md).
#ifndef FABRICSIM_ASTRA_API_COMMON_HH
#define FABRICSIM_ASTRA_API_COMMON_HH

#include <cstdint>

namespace AstraSim {

enum time_type_e { SE = 0, MS, US, NS, FS };

enum req_type_e { UINT8 = 0, BFLOAT16, FP32 };

struct timespec_t {
    time_type_e time_res;
    long double time_val;
};

struct sim_request {
    uint32_t srcRank;
    uint32_t dstRank;
    uint32_t tag;
    req_type_e reqType;
    uint64_t reqCount;
    uint32_t vnet;
    uint32_t layerNum;
};

}  // namespace AstraSim

#endif
