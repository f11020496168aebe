// dana24_aot_run MODEL DATA HEADS [MAX_BITS]: dana24_aot_certify on a model file and a data set, printed as
// JSON {"T", "examples": [{"verdict": 1|-1|0, "margin_lo", "margin_hi", "bits", "float32_margin",
// "float32_error_bound", "float32_disagreement"}]} (doubles as "%.17g" strings). Bad input: the
// InputError's line on stderr, exit 2. For tests (tests/model/dana24_torch.py).
#include <cstdio>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "memcert/model/dana24_aot.hpp"
#include "memcert/util/error.hpp"

namespace {
std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: dana24_aot_run MODEL DATA HEADS [MAX_BITS]\n");
    return 64;
  }
  try {
    const memcert::StateDict sd = memcert::state_dict_read(argv[1]);
    const memcert::Dana24Aot m = memcert::dana24_aot_load(sd, std::stoul(argv[3]), argv[1]);
    const memcert::Dana24AotData data = memcert::dana24_aot_read_data(argv[2]);
    memcert::CertifyOptions opt;
    if (argc == 5) opt.max_bits = std::stoi(argv[4]);
    const memcert::ModelVerdicts v = memcert::dana24_aot_certify(m, data, opt);
    nlohmann::ordered_json out;
    out["T"] = v.verdict.size();
    nlohmann::ordered_json ex = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < v.verdict.size(); ++k) {
      nlohmann::ordered_json e;
      e["verdict"] = v.verdict[k] == memcert::ExampleVerdict::correct ? 1 : v.verdict[k] == memcert::ExampleVerdict::wrong ? -1 : 0;
      e["margin_lo"] = num(v.margin_lo[k]);
      e["margin_hi"] = num(v.margin_hi[k]);
      e["bits"] = v.bits[k];
      e["float32_margin"] = num(v.float32_margin[k]);
      e["float32_error_bound"] = num(v.float32_error_bound[k]);
      e["float32_disagreement"] = static_cast<int>(v.float32_disagreement[k]);
      ex.push_back(std::move(e));
    }
    out["examples"] = std::move(ex);
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const memcert::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 70;
  }
}
