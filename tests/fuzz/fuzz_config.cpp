// libFuzzer target: the YAML configuration loader (config/load.h) on any text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = nfsrdmad::config::load_string(text, "fuzz.yaml");
    // Either a configuration or at least one error, never neither.
    if (!r.config && r.errors.empty()) abort();
    return 0;
}
