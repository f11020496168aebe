// The restricted unpickler (pickle_vm.hpp). Each opcode consumes at least one byte and creates at most
// one object, so the loop is bounded by the pickle's size and the arena by kPickleMaxObjects; every length
// read from the pickle is checked against the bytes left before anything is allocated.
#include "pickle_vm.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "../data/printable.hpp"
#include "memcert/util/error.hpp"

namespace memcert::detail {

namespace {

// Objects one pickle may create (about 100 bytes each): far above any state_dict or checkpoint
// (tens of objects per tensor), far below what would strain memory.
constexpr std::size_t kPickleMaxObjects = std::size_t{1} << 22;
constexpr std::size_t kPickleMaxGlobalLine = 256;

const char* pickle_opcode_name(unsigned char op) {
  static const std::map<unsigned char, const char*> names = {
      {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"}, {'F', "FLOAT"}, {'I', "INT"},
      {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"}, {'M', "BININT2"}, {'N', "NONE"}, {'P', "PERSID"},
      {'Q', "BINPERSID"}, {'R', "REDUCE"}, {'S', "STRING"}, {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"},
      {'V', "UNICODE"}, {'X', "BINUNICODE"}, {'a', "APPEND"}, {'b', "BUILD"}, {'c', "GLOBAL"}, {'d', "DICT"},
      {'}', "EMPTY_DICT"}, {'e', "APPENDS"}, {'g', "GET"}, {'h', "BINGET"}, {'i', "INST"}, {'j', "LONG_BINGET"},
      {'l', "LIST"}, {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"}, {'q', "BINPUT"}, {'r', "LONG_BINPUT"},
      {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"}, {'u', "SETITEMS"}, {'G', "BINFLOAT"},
      {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"}, {0x80, "PROTO"}, {0x81, "NEWOBJ"}, {0x82, "EXT1"},
      {0x83, "EXT2"}, {0x84, "EXT4"}, {0x85, "TUPLE1"}, {0x86, "TUPLE2"}, {0x87, "TUPLE3"}, {0x88, "NEWTRUE"},
      {0x89, "NEWFALSE"}, {0x8a, "LONG1"}, {0x8b, "LONG4"}, {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"},
      {0x8e, "BINBYTES8"}, {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"}, {0x92, "NEWOBJ_EX"},
      {0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"}, {0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"},
      {0x98, "READONLY_BUFFER"}};
  const auto it = names.find(op);
  return it == names.end() ? "unknown" : it->second;
}

// The globals a state_dict pickle may name (what torch.load(weights_only=True) allows, narrowed to
// dense CPU-readable tensors): storage types map to their dtype.
bool pickle_storage_dtype(const std::string& global, DType& t) {
  static const std::map<std::string, DType> types = {
      {"torch.HalfStorage", DType::float16},  {"torch.BFloat16Storage", DType::bfloat16},
      {"torch.FloatStorage", DType::float32}, {"torch.DoubleStorage", DType::float64},
      {"torch.CharStorage", DType::int8},     {"torch.ShortStorage", DType::int16},
      {"torch.IntStorage", DType::int32},     {"torch.LongStorage", DType::int64},
      {"torch.ByteStorage", DType::uint8},    {"torch.BoolStorage", DType::boolean}};
  const auto it = types.find(global);
  if (it == types.end()) return false;
  t = it->second;
  return true;
}

bool pickle_global_allowed(const std::string& g) {
  static const char* const names[] = {
      "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor",
      "torch._utils._rebuild_parameter", "torch.Size", "torch.float16", "torch.bfloat16", "torch.float32",
      "torch.float64", "torch.int8", "torch.int16", "torch.int32", "torch.int64", "torch.uint8", "torch.bool"};
  DType t;
  if (pickle_storage_dtype(g, t)) return true;
  for (const char* n : names)
    if (g == n) return true;
  return false;
}

class PickleVm {
 public:
  PickleVm(const std::string& pkl, const std::string& file, const std::string& member)
      : p_(reinterpret_cast<const unsigned char*>(pkl.data())), n_(pkl.size()), file_(file), member_(member) {}

  PickleResult run() {
    for (;;) {
      if (at_ >= n_) fail(at_, "expected a pickle ending with STOP, got the end of " + member_);
      op_at_ = at_;
      const unsigned char op = p_[at_++];
      if (step(op)) break;
    }
    return std::move(r_);
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw input_error(file_, member_ + " byte " + std::to_string(at), what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail(op_at_, what); }

  // `k` bytes of operand (checked against the pickle's end).
  const unsigned char* take(std::size_t k) {
    if (n_ - at_ < k) fail(op_at_, std::string("expected ") + std::to_string(k) + " operand bytes of " +
                                       pickle_opcode_name(p_[op_at_]) + ", got the end of " + member_);
    const unsigned char* q = p_ + at_;
    at_ += k;
    return q;
  }
  std::uint64_t uint_le(std::size_t k) {
    const unsigned char* q = take(k);
    std::uint64_t v = 0;
    for (std::size_t j = k; j-- > 0;) v = (v << 8) | q[j];
    return v;
  }
  std::string text(std::uint64_t len) {
    if (len > n_ - at_) fail(op_at_, "expected a string of " + std::to_string(len) + " bytes, got the end of " + member_);
    return std::string(reinterpret_cast<const char*>(take(static_cast<std::size_t>(len))), static_cast<std::size_t>(len));
  }
  std::string line() {
    const std::size_t lim = std::min(n_ - at_, kPickleMaxGlobalLine);
    const void* nl = std::memchr(p_ + at_, '\n', lim);
    if (!nl) fail(op_at_, "expected a GLOBAL name of at most " + std::to_string(kPickleMaxGlobalLine) + " bytes ending in a newline");
    const auto len = static_cast<std::size_t>(static_cast<const unsigned char*>(nl) - (p_ + at_));
    std::string s(reinterpret_cast<const char*>(p_ + at_), len);
    at_ += len + 1;
    return s;
  }

  std::uint32_t make(PyObject o) {
    if (r_.arena.size() >= kPickleMaxObjects)
      fail("expected at most " + std::to_string(kPickleMaxObjects) + " pickled objects (the reader's memory bound)");
    r_.arena.push_back(std::move(o));
    return static_cast<std::uint32_t>(r_.arena.size() - 1);
  }
  std::uint32_t make(PyKind k) {
    PyObject o;
    o.kind = k;
    return make(std::move(o));
  }
  void push(std::uint32_t i) {
    if (stack_.size() >= kPickleMaxObjects) fail("expected a stack of at most " + std::to_string(kPickleMaxObjects) + " objects");
    stack_.push_back(i);
  }
  std::size_t base() const { return marks_.empty() ? 0 : marks_.back(); }
  std::uint32_t pop() {
    if (stack_.size() <= base()) fail(std::string("expected an object on the stack for ") + pickle_opcode_name(p_[op_at_]) + ", got none");
    const std::uint32_t i = stack_.back();
    stack_.pop_back();
    return i;
  }
  std::uint32_t top() {
    if (stack_.size() <= base()) fail(std::string("expected an object on the stack for ") + pickle_opcode_name(p_[op_at_]) + ", got none");
    return stack_.back();
  }
  std::vector<std::uint32_t> pop_mark() {
    if (marks_.empty()) fail(std::string("expected a MARK before ") + pickle_opcode_name(p_[op_at_]));
    std::vector<std::uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  PyObject& obj(std::uint32_t i) { return r_.arena[i]; }
  const char* kind(std::uint32_t i) const { return py_kind_name(r_.arena[i].kind); }

  std::uint32_t tuple(std::vector<std::uint32_t> items) {
    PyObject o;
    o.kind = PyKind::tuple;
    o.items = std::move(items);
    return make(std::move(o));
  }
  void set_items(std::uint32_t dict, const std::vector<std::uint32_t>& kv) {
    if (obj(dict).kind != PyKind::dict) fail(std::string("expected a dict to set items of, got ") + kind(dict));
    if (kv.size() % 2) fail("expected key/value pairs, got an odd number of objects");
    for (std::size_t k = 0; k < kv.size(); k += 2) {
      const PyKind kk = obj(kv[k]).kind;
      if (kk == PyKind::list || kk == PyKind::dict) fail(std::string("expected a hashable dict key, got ") + kind(kv[k]));
    }
    auto& items = obj(dict).items;
    items.insert(items.end(), kv.begin(), kv.end());
  }
  void append(std::uint32_t list, const std::vector<std::uint32_t>& xs) {
    if (obj(list).kind != PyKind::list) fail(std::string("expected a list to append to, got ") + kind(list));
    auto& items = obj(list).items;
    items.insert(items.end(), xs.begin(), xs.end());
  }
  void memo_put(std::uint64_t k) {
    const std::uint32_t v = top();
    if (memo_.size() >= kPickleMaxObjects && !memo_.count(k))
      fail("expected at most " + std::to_string(kPickleMaxObjects) + " memo entries");
    memo_[k] = v;
  }
  void memo_get(std::uint64_t k) {
    const auto it = memo_.find(k);
    if (it == memo_.end()) fail("expected a memo entry " + std::to_string(k) + " stored before, got none");
    push(it->second);
  }
  void global(const std::string& module, const std::string& name) {
    const std::string g = module + "." + name;
    if (!pickle_global_allowed(g))
      fail("expected a global that a state_dict may name (torch.load(weights_only=True)), got '" +
           printable_excerpt(g, 80) + "' (nothing was imported or run)");
    PyObject o;
    o.kind = PyKind::global;
    o.s = g;
    push(make(std::move(o)));
  }
  std::int64_t nonneg_int(std::uint32_t i, const char* what) {
    if (obj(i).kind != PyKind::integer || obj(i).i < 0)
      fail(std::string("expected ") + what + " (a non-negative int), got " + kind(i));
    return obj(i).i;
  }
  std::vector<std::uint64_t> int_tuple(std::uint32_t i, const char* what) {
    if (obj(i).kind != PyKind::tuple) fail(std::string("expected ") + what + " (a tuple of ints), got " + kind(i));
    std::vector<std::uint64_t> v;
    for (std::uint32_t e : obj(i).items) v.push_back(static_cast<std::uint64_t>(nonneg_int(e, what)));
    return v;
  }
  void persistent_load() {
    const std::uint32_t pid = pop();
    const PyObject& t = obj(pid);
    if (t.kind != PyKind::tuple || t.items.size() != 5 || obj(t.items[0]).kind != PyKind::string ||
        obj(t.items[0]).s != "storage")
      fail("expected a persistent id ('storage', type, key, location, numel)");
    DType dt;
    if (obj(t.items[1]).kind != PyKind::global || !pickle_storage_dtype(obj(t.items[1]).s, dt))
      fail("expected a storage type (torch.FloatStorage, ...) in a persistent id");
    if (obj(t.items[2]).kind != PyKind::string || obj(t.items[3]).kind != PyKind::string)
      fail("expected a storage key and location (strings) in a persistent id");
    PyObject s;
    s.kind = PyKind::storage;
    s.dtype = dt;
    s.s = obj(t.items[2]).s;
    s.i = nonneg_int(t.items[4], "a storage's element count");
    const auto seen = storages_.find(s.s);
    if (seen != storages_.end() && (seen->second.first != s.dtype || seen->second.second != s.i))
      fail("expected storage '" + printable_excerpt(s.s, 40) + "' to keep one type and size, got two");
    storages_.emplace(s.s, std::make_pair(s.dtype, s.i));
    push(make(std::move(s)));
  }
  void reduce() {
    const std::uint32_t args = pop(), fn = pop();
    if (obj(fn).kind != PyKind::global) fail(std::string("expected a callable global for REDUCE, got ") + kind(fn));
    if (obj(args).kind != PyKind::tuple) fail(std::string("expected an argument tuple for REDUCE, got ") + kind(args));
    const std::string g = obj(fn).s;
    const std::vector<std::uint32_t> a = obj(args).items;
    if (g == "collections.OrderedDict") {
      if (!a.empty()) fail("expected OrderedDict() called without arguments");
      const std::uint32_t d = make(PyKind::dict);
      obj(d).ordered = true;
      push(d);
    } else if (g == "torch._utils._rebuild_tensor_v2" || g == "torch._utils._rebuild_tensor") {
      const bool v2 = g.back() == '2';
      if (v2 ? (a.size() != 6 && a.size() != 7) : a.size() != 4)
        fail(std::string("expected ") + (v2 ? "6 or 7" : "4") + " arguments to " + g + ", got " + std::to_string(a.size()));
      if (obj(a[0]).kind != PyKind::storage) fail(std::string("expected a storage as a tensor's first argument, got ") + kind(a[0]));
      PyTensor t;
      t.storage = a[0];
      t.offset = static_cast<std::uint64_t>(nonneg_int(a[1], "a storage offset"));
      t.shape = int_tuple(a[2], "a tensor's size");
      t.stride = int_tuple(a[3], "a tensor's stride");
      if (t.shape.size() != t.stride.size())
        fail("expected as many strides as dimensions, got " + std::to_string(t.stride.size()) + " and " +
             std::to_string(t.shape.size()));
      if (v2 && obj(a[4]).kind != PyKind::boolean) fail(std::string("expected requires_grad (a bool), got ") + kind(a[4]));
      PyObject o;
      o.kind = PyKind::tensor;
      o.i = static_cast<std::int64_t>(r_.tensors.size());
      r_.tensors.push_back(std::move(t));
      push(make(std::move(o)));
    } else if (g == "torch._utils._rebuild_parameter") {
      if (a.size() != 3 || obj(a[0]).kind != PyKind::tensor || obj(a[1]).kind != PyKind::boolean)
        fail("expected _rebuild_parameter(tensor, requires_grad, hooks)");
      push(a[0]);
    } else if (g == "torch.Size") {
      if (a.size() != 1) fail("expected torch.Size called with one tuple");
      (void)int_tuple(a[0], "a torch.Size");
      push(a[0]);
    } else {
      fail("expected a callable global (OrderedDict, _rebuild_tensor_v2, _rebuild_parameter, torch.Size), got '" +
           printable_excerpt(g, 80) + "' called");
    }
  }
  void build() {
    const std::uint32_t state = pop(), inst = top();
    if (obj(inst).kind != PyKind::dict || obj(state).kind != PyKind::dict)
      fail(std::string("expected BUILD of a dict's attributes (a dict), got BUILD of ") + kind(inst) + " with " + kind(state));
  }

  // One opcode; true at STOP.
  bool step(unsigned char op) {
    switch (op) {
      case 0x80: {  // PROTO
        const unsigned v = *take(1);
        if (v > 5) fail("expected pickle protocol 2 to 5, got " + std::to_string(v));
        return false;
      }
      case 0x95: (void)take(8); return false;  // FRAME: a length hint only
      case '(':
        if (marks_.size() >= kPickleMaxObjects) fail("expected at most " + std::to_string(kPickleMaxObjects) + " open MARKs");
        marks_.push_back(stack_.size());
        return false;
      case '.': r_.root = pop(); return true;
      case '0': (void)pop(); return false;
      case '1': (void)pop_mark(); return false;
      case '2': push(top()); return false;
      case 'N': push(make(PyKind::none)); return false;
      case 0x88: case 0x89: {
        const std::uint32_t b = make(PyKind::boolean);
        obj(b).i = op == 0x88;
        push(b);
        return false;
      }
      case 'J': case 'K': case 'M': case 0x8a: {
        std::int64_t v = 0;
        PyKind k = PyKind::integer;
        if (op == 'J') v = static_cast<std::int32_t>(static_cast<std::uint32_t>(uint_le(4)));
        else if (op == 'K') v = static_cast<std::int64_t>(uint_le(1));
        else if (op == 'M') v = static_cast<std::int64_t>(uint_le(2));
        else {
          const std::size_t len = *take(1);
          if (len > 8) {
            (void)take(len);
            k = PyKind::big_integer;  // a Python int beyond 64 bits: kept as an opaque value
          } else if (len > 0) {
            const std::uint64_t u = uint_le(len);
            const std::uint64_t sign = std::uint64_t{1} << (8 * len - 1);
            v = len == 8 ? static_cast<std::int64_t>(u) : static_cast<std::int64_t>(u ^ sign) - static_cast<std::int64_t>(sign);
          }
        }
        const std::uint32_t o = make(k);
        obj(o).i = v;
        push(o);
        return false;
      }
      case 'G': {
        const unsigned char* q = take(8);
        std::uint64_t u = 0;
        for (int j = 0; j < 8; ++j) u = (u << 8) | q[j];  // big-endian
        const std::uint32_t o = make(PyKind::floating);
        std::memcpy(&obj(o).f, &u, 8);
        push(o);
        return false;
      }
      case 'X': case 0x8c: case 0x8d: case 'U': case 'B': case 'C': {
        const std::uint64_t len = uint_le(op == 'X' || op == 'B' ? 4 : op == 0x8d ? 8 : 1);
        PyObject o;
        o.kind = op == 'B' || op == 'C' ? PyKind::bytes : PyKind::string;
        o.s = text(len);
        push(make(std::move(o)));
        return false;
      }
      case ')': push(tuple({})); return false;
      case 0x85: case 0x86: case 0x87: {
        std::vector<std::uint32_t> items(static_cast<std::size_t>(op - 0x84));
        for (std::size_t k = items.size(); k-- > 0;) items[k] = pop();
        push(tuple(std::move(items)));
        return false;
      }
      case 't': push(tuple(pop_mark())); return false;
      case ']': push(make(PyKind::list)); return false;
      case 'l': {
        std::vector<std::uint32_t> xs = pop_mark();
        const std::uint32_t l = make(PyKind::list);
        obj(l).items = std::move(xs);
        push(l);
        return false;
      }
      case 'a': {
        const std::uint32_t x = pop();
        append(top(), {x});
        return false;
      }
      case 'e': {
        const std::vector<std::uint32_t> xs = pop_mark();
        append(top(), xs);
        return false;
      }
      case '}': push(make(PyKind::dict)); return false;
      case 'd': {
        const std::vector<std::uint32_t> kv = pop_mark();
        const std::uint32_t d = make(PyKind::dict);
        set_items(d, kv);
        push(d);
        return false;
      }
      case 's': {
        const std::uint32_t v = pop(), k = pop();
        set_items(top(), {k, v});
        return false;
      }
      case 'u': {
        const std::vector<std::uint32_t> kv = pop_mark();
        set_items(top(), kv);
        return false;
      }
      case 'q': memo_put(uint_le(1)); return false;
      case 'r': memo_put(uint_le(4)); return false;
      case 0x94: memo_put(memo_.size()); return false;
      case 'h': memo_get(uint_le(1)); return false;
      case 'j': memo_get(uint_le(4)); return false;
      case 'c': {
        std::string module = line();
        global(module, line());
        return false;
      }
      case 0x93: {
        const std::uint32_t name = pop(), module = pop();
        if (obj(name).kind != PyKind::string || obj(module).kind != PyKind::string)
          fail("expected STACK_GLOBAL's module and name as strings");
        global(obj(module).s, obj(name).s);
        return false;
      }
      case 'Q': persistent_load(); return false;
      case 'R': reduce(); return false;
      case 'b': build(); return false;
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail(std::string("expected an opcode a state_dict pickle uses, got ") + hex + " (" + pickle_opcode_name(op) +
             "; nothing was run)");
      }
    }
  }

  const unsigned char* p_;
  std::size_t n_, at_ = 0, op_at_ = 0;
  const std::string& file_;
  const std::string& member_;
  PickleResult r_;
  std::vector<std::uint32_t> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, std::uint32_t> memo_;
  std::map<std::string, std::pair<DType, std::int64_t>> storages_;
};

}  // namespace

const char* py_kind_name(PyKind k) {
  switch (k) {
    case PyKind::none: return "None";
    case PyKind::boolean: return "a bool";
    case PyKind::integer: case PyKind::big_integer: return "an int";
    case PyKind::floating: return "a float";
    case PyKind::string: return "a str";
    case PyKind::bytes: return "bytes";
    case PyKind::tuple: return "a tuple";
    case PyKind::list: return "a list";
    case PyKind::dict: return "a dict";
    case PyKind::global: return "a global";
    case PyKind::storage: return "a storage";
    case PyKind::tensor: return "a tensor";
  }
  return "an object";
}

PickleResult pickle_run(const std::string& pkl, const std::string& file, const std::string& member) {
  return PickleVm(pkl, file, member).run();
}

}  // namespace memcert::detail
