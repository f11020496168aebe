// state_dict_dump MODEL: prints the state_dict that memcert reads from MODEL (any accepted format) as
// JSON {"key": {"dtype", "shape", "values"}} in the file's order; float values as decimal strings that
// round-trip exactly ("%.17g"; "nan", "inf", "-inf"), integers as JSON integers. Bad input: the
// InputError's line on stderr, exit 2. For tests (tests/model/torch_files.py).
#include <cstdio>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: state_dict_dump MODEL [MAX_ELEMENTS]\n");
    return 64;
  }
  try {
    memcert::StateDictLimits limits;
    if (argc == 3) limits.max_elements = std::stoull(argv[2]);
    const memcert::StateDict sd = memcert::state_dict_read(argv[1], limits);
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& [key, t] : sd.entries()) {
      nlohmann::ordered_json e;
      e["dtype"] = memcert::dtype_name(t.dtype);
      e["shape"] = t.shape;
      nlohmann::ordered_json values = nlohmann::ordered_json::array();
      if (memcert::dtype_is_float(t.dtype)) {
        for (double v : t.f64) {
          char buf[40];
          std::snprintf(buf, sizeof buf, "%.17g", v);
          values.push_back(std::string(buf));
        }
      } else {
        for (std::int64_t v : t.i64) values.push_back(v);
      }
      e["values"] = std::move(values);
      out[key] = std::move(e);
    }
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return 0;
  } catch (const memcert::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 70;
  }
}
