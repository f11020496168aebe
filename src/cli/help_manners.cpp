// Command-line manners: one worked example at the foot of every command's --help, a "did you mean"
// suggestion for a mistyped command or option name (nearest registered name by edit distance), integer options
// read exactly, and arguments shown escaped in messages.
#include <algorithm>
#include <limits>
#include <map>
#include <vector>

#include "command.hpp"
#include "../data/printable.hpp"

namespace memcert::cli {

namespace {

// One worked example per command path ("construct mahdavi24"): a command line that runs as written
// when the files it names exist (they are the outputs of the generate examples).
const std::map<std::string, std::string>& help_examples() {
  static const std::map<std::string, std::string> m{
      {"rank", "memcert rank matrix.npy --tol 1e-6 --cert rank_cert.json --json"},
      {"kruskal", "memcert kruskal queries.txt --at-least 4 --cert kruskal_cert.json"},
      {"assumptions", "memcert generate mahdavi24 --T 13 --n 4 --d 6 --out data.json && memcert assumptions data.json"},
      {"construct", "memcert construct mahdavi24 data.json --heads 4 --dh 4 --out cert.json"},
      {"construct mahdavi24",
       "memcert generate mahdavi24 --T 13 --n 4 --d 6 --out data.npz && "
       "memcert construct mahdavi24 data.npz --heads 4 --dh 4 --out cert.json --weights-out weights.npz"},
      {"construct ks25",
       "memcert generate ks25 --N 16 --n 4 --d 3 --C 2 --out seq.json && memcert construct ks25 seq.json --out ks_cert.json --check"},
      {"generate", "memcert generate mahdavi24 --T 13 --n 4 --d 6 --out data.npz"},
      {"generate mahdavi24", "memcert generate mahdavi24 --T 13 --n 4 --d 6 --C 3 --out data.npz   (class labels in [0, 3))"},
      {"generate shared", "memcert generate shared --T 7 --n 3 --d 5 --out shared.json"},
      {"generate general", "memcert generate general --T 8 --n 3 --d 5 --out general.npz"},
      {"generate ks25", "memcert generate ks25 --N 16 --n 4 --d 3 --C 2 --out seq.json"},
      {"generate pe", "memcert generate pe --n 16 --d 8 --out pe.npy"},
      {"claims", "memcert claims run mahdavi24/theorem-1"},
      {"claims list", "memcert claims list --json"},
      {"claims run", "memcert claims run mahdavi24/theorem-1 --cert-dir certs"},
      {"demo", "memcert demo --json   (narrates every proof step without --json)"},
      {"verify", "memcert verify cert.json --json"},
      {"certify", "memcert construct mahdavi24 data.npz --heads 4 --dh 4 --out cert.json --weights-out w.npz && memcert certify w.npz data.npz --arch mha --tolerance 1e-6 --json"},
      {"export", "memcert export coq rank_cert.json --out rank_coq && rank_coq/check.sh"},
      {"export coq", "memcert rank matrix.npy --cert rank_cert.json && memcert export coq rank_cert.json --out rank_coq && rank_coq/check.sh"},
  };
  return m;
}

void add_examples(CLI::App* app, const std::string& path) {
  for (CLI::App* sub : app->get_subcommands({})) {
    std::string p = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    auto it = help_examples().find(p);
    if (it != help_examples().end()) sub->footer("\nExample:\n  " + it->second);
    add_examples(sub, p);
  }
}

// Edit distance with insert, delete, substitute and swap of two adjacent letters, each of cost 1
// (optimal string alignment): "rnak" is one swap from "rank", the commonest typo.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> D(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) D[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) D[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      D[i][j] = std::min({D[i - 1][j] + 1, D[i][j - 1] + 1, D[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) D[i][j] = std::min(D[i][j], D[i - 2][j - 2] + 1);
    }
  return D[a.size()][b.size()];
}

}  // namespace

void help_examples_apply(CLI::App& root) {
  add_examples(&root, "");
  root.footer("\nExample:\n  memcert generate mahdavi24 --T 13 --n 4 --d 6 --out data.json && "
              "memcert construct mahdavi24 data.json --heads 4 --dh 4 --out cert.json\n"
              "Every command has --help with a worked example.");
}

std::string command_name_check(CLI::App& root, int argc, char** argv) {
  CLI::App* cur = &root;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string tok = argv[i];
    if (tok.empty() || tok[0] == '-') return "";
    std::vector<CLI::App*> subs = cur->get_subcommands({});
    if (subs.empty()) return "";  // a leaf command: the rest are its arguments
    CLI::App* next = nullptr;
    for (CLI::App* s : subs)
      if (s->check_name(tok)) next = s;
    if (next) {
      path += (path.empty() ? "" : " ") + tok;
      cur = next;
      continue;
    }
    std::string best;
    std::size_t best_d = SIZE_MAX;
    for (CLI::App* s : subs) {  // a command's name and its aliases (earlier names): the nearest spelling
      std::vector<std::string> spellings = s->get_aliases();
      spellings.insert(spellings.begin(), s->get_name());
      for (const std::string& w : spellings)
        if (std::size_t dist = edit_distance(tok, w); dist < best_d) best_d = dist, best = w;
    }
    std::string msg = "unknown command '" + (path.empty() ? tok : path + " " + tok) + "'";
    // A suggestion only when it is plausibly a typo: at most 2 edits and fewer than half the letters.
    if (best_d <= 2 && 2 * best_d < std::max<std::size_t>(tok.size(), 2))
      msg += "; did you mean '" + (path.empty() ? best : path + " " + best) + "'?";
    else
      msg += " (see memcert " + (path.empty() ? std::string() : path + " ") + "--help)";
    return msg;
  }
  return "";
}

std::string option_name_check(CLI::App& root, int argc, char** argv) {
  // The command the words name (options may come before, between or after them), as spelled (an alias
  // stays the alias in messages), and the --options given.
  std::vector<CLI::App*> chain{&root};
  std::vector<std::string> spelled;
  std::vector<std::string> given;
  for (int i = 1; i < argc; ++i) {
    const std::string tok = argv[i];
    if (tok == "--") break;  // the rest are positional
    if (tok.rfind("--", 0) == 0) {
      given.push_back(tok.substr(0, tok.find('=')));
      continue;
    }
    if (tok.empty() || tok[0] == '-') continue;
    for (CLI::App* s : chain.back()->get_subcommands({}))
      if (s->check_name(tok)) {
        chain.push_back(s);
        spelled.push_back(tok);
        break;
      }
  }
  std::string path;
  for (std::size_t k = 0; k < spelled.size(); ++k) path += (k > 0 ? " " : "") + spelled[k];
  for (const std::string& opt : given) {
    const std::string name = opt.substr(2);
    if (name.empty()) continue;
    bool known = false;
    std::string best;
    std::size_t best_d = SIZE_MAX;
    for (CLI::App* app : chain)  // the command's own options and those it inherits (global ones)
      for (const CLI::Option* o : app->get_options()) {
        for (const std::string& l : o->get_lnames()) {
          if (l == name) known = true;
          const std::size_t dist = edit_distance(name, l);
          if (dist < best_d) best_d = dist, best = l;
        }
      }
    if (known) continue;
    if (best_d <= 2 && 2 * best_d < std::max<std::size_t>(name.size(), 2))
      return "unknown option '" + printable_argument(opt, 80) + "'" + (path.empty() ? "" : " for '" + path + "'") +
             "; did you mean '--" + best + "'?";
  }
  return "";  // unknown options without a close match: the parser's own message
}

}  // namespace memcert::cli

namespace memcert::cli {

std::optional<long long> int_in_range(const std::string& text, long long min, long long max) {
  std::size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) ++i;
  if (i == text.size()) return std::nullopt;
  // The magnitude, exactly: anything above 2^63 is out of every range a long long holds.
  constexpr unsigned long long kLimit = 9223372036854775808ULL;  // 2^63
  unsigned long long mag = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<unsigned long long>(c - '0');
    if (mag > (kLimit - digit) / 10) return std::nullopt;
    mag = mag * 10 + digit;
  }
  if (!negative && mag == kLimit) return std::nullopt;
  long long v = 0;
  if (negative) v = mag == kLimit ? std::numeric_limits<long long>::min() : -static_cast<long long>(mag);
  else v = static_cast<long long>(mag);
  if (v < min || v > max) return std::nullopt;
  return v;
}

std::string printable_argument(const std::string& text, std::size_t max_chars) {
  return detail::printable_excerpt(text, max_chars);
}

}  // namespace memcert::cli
