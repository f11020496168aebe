#pragma once
// `verify CERT --data DATA`: is the certificate about the user's data set? The data arrive as exact JSON
// (docs/CERTIFICATES.md, "Tying a certificate to a data set"); each supported kind compares the data it
// embeds with them exactly, entry by entry, and names the first difference.
#include <string>

#include "kernel/json.hpp"

namespace memcert_checker {

// True iff kind `kind` embeds a data set that match_data can compare (theorem1, ks, dana24).
bool match_data_supported(const std::string& kind);

// True iff the data embedded in `cert` (of kind `kind`) equal `data` exactly: same shapes, every exact
// number equal as a rational ("0.5" equals "1/2"), every integer equal. Otherwise false with `why` naming
// the first differing position ("data.contexts[3][1][0]: the certificate has 1/2, DATA has 3/4"). An
// ill-typed certificate field is malformed (as in read.hpp). Notes under "applied" what was compared and
// under "not checked" what DATA does not determine (labels, when DATA has none).
bool match_data(const std::string& kind, const json::Value& cert, const json::Value& data, std::string& why);

}  // namespace memcert_checker
