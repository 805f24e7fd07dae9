//===- QuantConfig.cpp - Checkpoint quantization configs ------------------===//
//
// Parses `quantization_config` (and ModelOpt's hf_quant_config.json) of every
// supported producer into per-module ModuleQuantization rules. The field
// names follow docs/Formats.md.
//
//===----------------------------------------------------------------------===//

#include "Humming/Quant/Adapters.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

namespace humming {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

/// Reads optional typed fields of a config object, collecting the first
/// type error with its path.
class Fields {
public:
  Fields(const Json *obj, std::string path) : obj_(obj), path_(std::move(path)) {}

  std::optional<std::string> str(const char *key) {
    const Json *v = find(key);
    if (!v || v->isNull())
      return std::nullopt;
    if (!v->isString())
      return typeError(key, "a string", *v), std::nullopt;
    return v->asString();
  }
  std::optional<int64_t> integer(const char *key) {
    const Json *v = find(key);
    if (!v || v->isNull())
      return std::nullopt;
    if (!v->isInteger())
      return typeError(key, "an integer", *v), std::nullopt;
    // Every integer a config holds is a bit width or a group size (-1: per
    // channel): a bound here keeps the shapes computed from them in range.
    constexpr int64_t kMax = int64_t(1) << 20;
    if (v->asInteger() < -1 || v->asInteger() > kMax)
      return fail(concat("'", key, "': expected an integer in -1 .. ", kMax,
                         ", got ", v->asInteger())),
             std::nullopt;
    return v->asInteger();
  }
  std::optional<bool> boolean(const char *key) {
    const Json *v = find(key);
    if (!v || v->isNull())
      return std::nullopt;
    if (!v->isBool())
      return typeError(key, "true or false", *v), std::nullopt;
    return v->asBool();
  }
  const Json *object(const char *key) {
    const Json *v = find(key);
    if (!v || v->isNull())
      return nullptr;
    if (!v->isObject())
      return typeError(key, "an object", *v), nullptr;
    return v;
  }
  std::vector<std::string> strings(const char *key) {
    std::vector<std::string> out;
    const Json *v = find(key);
    if (!v || v->isNull())
      return out;
    if (!v->isArray())
      return typeError(key, "a list of strings", *v), out;
    for (const Json &item : v->items()) {
      if (!item.isString())
        return typeError(key, "a list of strings", *v), out;
      out.push_back(item.asString());
    }
    return out;
  }
  std::vector<int64_t> integers(const char *key) {
    std::vector<int64_t> out;
    const Json *v = find(key);
    if (!v || v->isNull())
      return out;
    if (!v->isArray())
      return typeError(key, "a list of integers", *v), out;
    for (const Json &item : v->items()) {
      if (!item.isInteger())
        return typeError(key, "a list of integers", *v), out;
      out.push_back(item.asInteger());
    }
    return out;
  }
  const Json *raw(const char *key) const { return find(key); }
  void fail(const std::string &m) {
    if (error_.empty())
      error_ = path_ + ": " + m;
  }
  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }
  const std::string &path() const { return path_; }

private:
  const Json *find(const char *key) const { return obj_ ? obj_->get(key) : nullptr; }
  void typeError(const char *key, const char *want, const Json &got) {
    fail(concat("'", key, "': expected ", want, ", got ", got.dump()));
  }
  const Json *obj_;
  std::string path_;
  std::string error_;
};

InputSchema sixteenBit(DType param) {
  return {param == DType::F16 ? ScalarType::f16() : ScalarType::bf16(),
          ActScaling::None, 0};
}

/// Glob match with '*' and '?' (ModelOpt / Quark module patterns).
bool globMatch(const std::string &pattern, const std::string &text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}
} // namespace

std::string ModuleQuantization::describe() const {
  std::ostringstream os;
  os << method;
  if (!variant.empty() && variant != method)
    os << " " << variant;
  if (bits)
    os << " " << bits << "-bit";
  if (blockN)
    os << " block " << blockN << "x" << blockK;
  else if (groupSize > 0)
    os << " group " << groupSize;
  else if (strategy == "tensor" || strategy == "per_tensor")
    os << " per-tensor";
  else
    os << " per-channel";
  if (!symmetric)
    os << " asymmetric";
  if (actOrder)
    os << " act-order";
  return os.str();
}

namespace {
/// Pattern kinds the producers use.
enum class Match { Exact, Substring, Glob, RegexMatch, RegexSearch };

bool matches(Match kind, const std::string &pattern, const std::string &module) {
  switch (kind) {
  case Match::Exact:
    return module == pattern;
  case Match::Substring:
    return module.find(pattern) != std::string::npos;
  case Match::Glob:
    return globMatch(pattern, module);
  case Match::RegexMatch:
  case Match::RegexSearch:
    try {
      std::regex re(pattern);
      return kind == Match::RegexMatch ? std::regex_match(module, re)
                                       : std::regex_search(module, re);
    } catch (const std::regex_error &) {
      return false; // rejected when the config is parsed
    }
  }
  return false;
}

/// Why a pattern from a config is not compiled (nullopt: it is fine).
/// std::regex backtracks and recurses: a nested unbounded repetition such as
/// (a+)+ takes exponential time, deep nesting or a long pattern overflows
/// the stack, and a huge {n} count or back-reference number overflows
/// inside libstdc++ (found by humming-fuzz-quant-config). Real configs use short patterns such as
/// "re:.*mlp\.experts\.\d+\.(gate|up)_proj$"; these limits leave them be.
Diag regexProblem(const std::string &pattern) {
  constexpr size_t kMaxLength = 256;
  constexpr int kMaxDepth = 8, kMaxCount = 1000;
  if (pattern.size() > kMaxLength)
    return concat("expected at most ", kMaxLength, " characters, got ",
                  pattern.size());
  // Per open group: whether it holds an unbounded repetition so far.
  std::vector<bool> groups = {false};
  bool lastUnbounded = false; ///< the atom just closed holds * + or {n,}
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      // A back-reference's number is read whole by libstdc++ and
      // overflows with enough digits (found by humming-fuzz-quant-config).
      size_t digits = 0;
      while (i + 1 + digits < pattern.size() &&
             pattern[i + 1 + digits] >= '0' && pattern[i + 1 + digits] <= '9')
        ++digits;
      if (digits > 2)
        return std::string("expected back-references of at most two digits");
      ++i;
      lastUnbounded = false;
      continue;
    }
    if (c == '[') { // a class: skip to its end (a leading ] is literal)
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^')
        ++j;
      if (j < pattern.size() && pattern[j] == ']')
        ++j;
      while (j < pattern.size() && pattern[j] != ']')
        j += pattern[j] == '\\' ? 2 : 1;
      i = j;
      lastUnbounded = false;
      continue;
    }
    if (c == '(') {
      if (int(groups.size()) > kMaxDepth)
        return concat("expected groups nested at most ", kMaxDepth, " deep");
      groups.push_back(false);
      lastUnbounded = false;
      continue;
    }
    if (c == ')') {
      if (groups.size() > 1) {
        lastUnbounded = groups.back();
        groups.pop_back();
        if (lastUnbounded) // the enclosing group holds it too
          groups.back() = true;
      }
      continue;
    }
    bool unbounded = c == '*' || c == '+';
    if (c == '{') {
      // An unclosed brace is an error std::regex reports, but only after
      // reading the count that follows, which overflows all the same
      // (found by humming-fuzz-quant-config): its digits are checked too.
      size_t close = pattern.find('}', i);
      std::string body = pattern.substr(
          i + 1, (close == std::string::npos ? pattern.size() : close) - i - 1);
      long count = 0;
      for (char d : body) {
        if (d >= '0' && d <= '9') {
          count = count * 10 + (d - '0');
          if (count > kMaxCount)
            return concat("expected repetition counts of at most ", kMaxCount);
        } else {
          count = 0;
        }
      }
      if (close == std::string::npos)
        break; // std::regex reports it
      unbounded = !body.empty() && body.back() == ',';
      i = close;
    }
    if (unbounded) {
      if (lastUnbounded)
        return std::string("expected no unbounded repetition of a group that "
                           "holds one (as (a+)+: exponential matching time)");
      groups.back() = true;
    }
    lastUnbounded = false;
  }
  try {
    std::regex re(pattern);
  } catch (const std::regex_error &) {
    return std::string("invalid");
  }
  return std::nullopt;
}

/// "'<pattern>': invalid regular expression" or, for one past the limits,
/// "...: unsupported regular expression (<why>)"; long patterns are cut.
std::string regexError(const std::string &quoted, const std::string &why) {
  std::string shown =
      quoted.size() > 80 ? quoted.substr(0, 77) + "..." : quoted;
  return why == "invalid"
             ? concat("'", shown, "': invalid regular expression")
             : concat("'", shown, "': unsupported regular expression (", why,
                      ")");
}
} // namespace

Result<std::optional<ModuleQuantization>>
QuantConfig::forModule(const std::string &module) const {
  for (const Rule &r : rules_) {
    if (!matches(Match(r.kind), r.pattern, module))
      continue;
    if (r.exclude)
      return std::optional<ModuleQuantization>();
    return std::optional<ModuleQuantization>(r.quant);
  }
  return default_;
}

namespace {
/// Whether `block` ([n, k] from the config key `key`) holds two block sizes
/// in 1 .. 2^20; otherwise records an error that names the key and the
/// values (a zero size divided the scale shapes by zero, a huge one
/// overflowed their products).
bool validBlock(Fields &f, const char *key, const std::vector<int64_t> &block) {
  constexpr int64_t kMaxBlock = int64_t(1) << 20;
  if (block.size() == 2 && block[0] > 0 && block[1] > 0 &&
      block[0] <= kMaxBlock && block[1] <= kMaxBlock)
    return true;
  std::string got;
  for (int64_t v : block)
    got += (got.empty() ? "" : ", ") + std::to_string(v);
  f.fail(concat("'", key, "': expected [n, k] with sizes in 1 .. ", kMaxBlock,
                ", got [", got, "]"));
  return false;
}

/// compressed-tensors QuantizationArgs of weights.
bool parseCtWeights(Fields &f, ModuleQuantization &q) {
  std::optional<int64_t> bits = f.integer("num_bits");
  std::string type = f.str("type").value_or("int");
  q.symmetric = f.boolean("symmetric").value_or(true);
  q.strategy = f.str("strategy").value_or("tensor");
  q.groupSize = f.integer("group_size").value_or(0);
  std::vector<int64_t> block = f.integers("block_structure");
  if (const std::optional<std::string> a = f.str("actorder"))
    q.actOrder = *a == "group" || *a == "weight";
  if (!f.ok())
    return false;
  if (!bits) {
    f.fail("expected 'num_bits'");
    return false;
  }
  q.bits = int(*bits);
  if (type != "int" && type != "float") {
    f.fail(concat("'type': expected int or float, got '", type, "'"));
    return false;
  }
  q.variant = type; // refined by the format below
  if (q.strategy == "block") {
    if (block.size() != 2) {
      f.fail("'block_structure': expected [n, k] with strategy block");
      return false;
    }
    if (!validBlock(f, "block_structure", block))
      return false;
    q.blockN = block[0];
    q.blockK = block[1];
  } else if (q.strategy == "group" || q.strategy == "tensor_group") {
    if (q.groupSize <= 0) {
      f.fail(concat("'group_size': expected a positive size with strategy ",
                 q.strategy));
      return false;
    }
  } else if (q.strategy != "channel" && q.strategy != "tensor") {
    f.fail(concat("'strategy': expected channel, group, block, tensor or "
               "tensor_group, got '",
               q.strategy, "'"));
    return false;
  }
  if (q.strategy != "group" && q.strategy != "tensor_group")
    q.groupSize = 0;
  return true;
}

/// compressed-tensors QuantizationArgs of input activations.
bool parseCtActivations(Fields &f, ModuleQuantization &q, DType param) {
  std::optional<int64_t> bits = f.integer("num_bits");
  std::string type = f.str("type").value_or("int");
  std::string strategy = f.str("strategy").value_or("token");
  // "dynamic" is true, false or "local" (dynamic per group).
  std::optional<bool> dynamic;
  if (const Json *d = f.raw("dynamic")) {
    if (d->isBool())
      dynamic = d->asBool();
    else if (d->isString() && d->asString() == "local")
      dynamic = true;
    else if (!d->isNull()) {
      f.fail(concat("'dynamic': expected true, false or \"local\", got ", d->dump()));
      return false;
    }
  }
  int64_t group = f.integer("group_size").value_or(0);
  if (!f.ok())
    return false;
  InputSchema in = sixteenBit(param);
  if (bits && *bits == 8)
    in.type = type == "float" ? ScalarType::e4m3() : ScalarType::sint(8);
  else if (bits && *bits == 4)
    in.type = type == "float" ? ScalarType::e2m1() : ScalarType::sint(4);
  else if (bits && *bits != 16) {
    f.fail(concat("'num_bits': expected 4, 8 or 16 for activations, got ", *bits));
    return false;
  }
  if (in.type.bits != 16) {
    bool isStatic = dynamic.has_value() && !*dynamic;
    if (strategy == "group" || strategy == "tensor_group") {
      in.scaling = ActScaling::Group;
      in.groupK = group;
    } else if (isStatic) {
      in.scaling = ActScaling::Static;
    } else {
      in.scaling = ActScaling::Token;
    }
    q.staticActivationScale = isStatic;
  }
  q.activation = in;
  return true;
}
} // namespace

/// A per-module override's group_size (negative: per channel) and sym
/// into `q` (gptq's dynamic, auto-round's extra_config).
static void readGroupAndSym(Fields &o, ModuleQuantization &q) {
  if (auto g = o.integer("group_size"))
    q.groupSize = *g < 0 ? 0 : *g;
  if (auto s = o.boolean("sym"))
    q.symmetric = *s;
}

/// fromJson's reading of one quantization_config (or hf_quant_config.json's
/// quantization): one member function per quant_method, each adding to the
/// config's rules and default. Errors collect in `f` (the first one is
/// reported); a member returns one itself where it cannot go on.
struct QuantConfig::Parser {
  QuantConfig &qc;
  Fields &f;
  const std::string &method, &qPath;
  /// What every module gets unless a rule says otherwise.
  ModuleQuantization base;

  /// Modules the config leaves unquantized ("re:" patterns are regexes).
  void addExcludes(const std::vector<std::string> &patterns, Match kind);
  /// gptq, awq and auto-round: bits and group size, then each one's own.
  Status gptqFamily();
  Status gptq();
  Status awq();
  Status autoRound();
  Status compressedTensors();
  Status fp8();
  Status modelopt();
  Status mxfp4();
  Status bitnet();
  Status quark();
  /// A quark layer_quant_config or global_quant_config entry into `mq`.
  bool quarkSpec(const Json *spec, const std::string &path,
                 ModuleQuantization &mq);
};

void QuantConfig::Parser::addExcludes(const std::vector<std::string> &patterns,
                                      Match kind) {
  for (const std::string &p : patterns) {
    if (p.rfind("re:", 0) == 0) {
      std::string re = p.substr(3);
      if (Diag why = regexProblem(re)) {
        f.fail(regexError(p, *why));
        continue;
      }
      qc.rules_.push_back({uint8_t(Match::RegexMatch), re, true, {}});
    } else {
      qc.rules_.push_back({uint8_t(kind), p, true, {}});
    }
  }
}

Status QuantConfig::Parser::gptqFamily() {
  std::optional<int64_t> bits = f.integer("bits");
  if (!bits)
    bits = f.integer("w_bit");
  std::optional<int64_t> group = f.integer("group_size");
  if (!group)
    group = f.integer("q_group_size");
  base.bits = int(bits.value_or(4));
  base.groupSize = group.value_or(-1) < 0 ? 0 : *group;
  if (method == "gptq") {
    if (Status s = gptq(); !s)
      return s;
  } else if (method == "awq") {
    if (Status s = awq(); !s)
      return s;
  } else if (Status s = autoRound(); !s) {
    return s;
  }
  addExcludes(f.strings("modules_to_not_convert"), Match::Substring);
  qc.default_ = base;
  return Status::success();
}

Status QuantConfig::Parser::gptq() {
  base.symmetric = f.boolean("sym").value_or(true);
  base.actOrder = f.boolean("desc_act").value_or(false);
  std::string fmt = lower(f.str("checkpoint_format").value_or("gptq"));
  if (fmt != "gptq" && fmt != "gptq_v2")
    f.fail(concat("'checkpoint_format': expected gptq or gptq_v2, got '", fmt,
                  "'"));
  base.variant = fmt;
  // GPTQModel's per-module overrides: "-:regex" skips, "+:regex" or a
  // bare regex overrides fields.
  if (const Json *dyn = f.object("dynamic")) {
    for (const auto &[key, value] : dyn->members()) {
      bool skip = key.rfind("-:", 0) == 0;
      std::string re = key.rfind("+:", 0) == 0 || skip ? key.substr(2) : key;
      if (Diag why = regexProblem(re)) {
        f.fail("dynamic " + regexError(key, *why));
        break;
      }
      Rule rule{uint8_t(Match::RegexSearch), re, skip, base};
      if (!skip) {
        Fields o(&value, qPath + ": dynamic '" + key + "'");
        if (auto b = o.integer("bits"))
          rule.quant.bits = int(*b);
        readGroupAndSym(o, rule.quant);
        if (auto d = o.boolean("desc_act"))
          rule.quant.actOrder = *d;
        if (!o.ok())
          return Error{o.error()};
      }
      qc.rules_.push_back(std::move(rule));
    }
  }
  return Status::success();
}

Status QuantConfig::Parser::awq() {
  base.symmetric = !f.boolean("zero_point").value_or(true);
  std::string version = lower(f.str("version").value_or("gemm"));
  if (version != "gemm")
    f.fail(concat("'version': expected gemm (the packed layout Humming reads), "
                  "got '",
                  version, "'"));
  base.variant = "awq";
  return Status::success();
}

Status QuantConfig::Parser::autoRound() {
  base.symmetric = f.boolean("sym").value_or(true);
  std::string dataType = lower(f.str("data_type").value_or("int"));
  if (dataType != "int")
    f.fail(concat("'data_type': expected int (auto-round float formats are "
                  "not supported), got '",
                  dataType, "'"));
  int64_t actBits = f.integer("act_bits").value_or(16);
  if (actBits < 16)
    f.fail(concat("'act_bits': expected 16 (activation quantization is not "
                  "supported for auto-round checkpoints), got ",
                  actBits));
  std::string packing =
      lower(f.str("packing_format").value_or("auto_round:auto_gptq"));
  if (packing.find("awq") != std::string::npos)
    base.variant = "awq";
  else if (packing.find("auto_gptq") != std::string::npos)
    base.variant = "gptq";
  else
    base.variant = "gptq_v2";
  if (const Json *extra = f.object("extra_config")) {
    for (const auto &[layer, value] : extra->members()) {
      Rule rule{uint8_t(Match::Exact), layer, false, base};
      Fields o(&value, qPath + ": extra_config '" + layer + "'");
      if (auto b = o.integer("bits")) {
        rule.quant.bits = int(*b);
        if (*b >= 16)
          rule.exclude = true;
      }
      readGroupAndSym(o, rule.quant);
      if (!o.ok())
        return Error{o.error()};
      qc.rules_.push_back(std::move(rule));
    }
  }
  return Status::success();
}

Status QuantConfig::Parser::compressedTensors() {
  std::string globalFormat = f.str("format").value_or("pack-quantized");
  addExcludes(f.strings("ignore"), Match::Exact);
  const Json *groups = f.object("config_groups");
  if (f.ok() && !groups)
    f.fail("expected 'config_groups'");
  if (groups) {
    for (const auto &[name, group] : groups->members()) {
      std::string gpath = qPath + ": config_groups '" + name + "'";
      Fields g(&group, gpath);
      ModuleQuantization mq = base;
      mq.variant = g.str("format").value_or(globalFormat);
      std::vector<std::string> targets = g.strings("targets");
      const Json *weights = g.object("weights");
      const Json *inputs = g.object("input_activations");
      if (!g.ok())
        return Error{g.error()};
      if (!weights)
        return Error{gpath + ": expected 'weights'"};
      Fields wf(weights, gpath + ": weights");
      if (!parseCtWeights(wf, mq))
        return Error{wf.error()};
      std::string wtype = mq.variant; // "int" or "float" after parse
      mq.variant = g.str("format").value_or(globalFormat);
      if (mq.variant == "pack-quantized" && wtype != "int")
        return Error{gpath + ": expected int weights with format "
                             "pack-quantized, got float"};
      if (inputs) {
        Fields af(inputs, gpath + ": input_activations");
        if (!parseCtActivations(af, mq, qc.paramDType_))
          return Error{af.error()};
      }
      if (mq.variant == "float-quantized" && wtype != "float")
        return Error{gpath + ": expected float weights with format "
                             "float-quantized, got int"};
      for (const std::string &t : targets) {
        if (t.rfind("re:", 0) == 0) {
          std::string re = t.substr(3);
          if (Diag why = regexProblem(re))
            return Error{concat(gpath, ": target ", regexError(t, *why))};
          qc.rules_.push_back({uint8_t(Match::RegexMatch), re, false, mq});
        } else if (t == "Linear" || t.find("Linear") != std::string::npos) {
          // Every module Humming loads is a linear layer.
          if (!qc.default_)
            qc.default_ = mq;
        } else {
          qc.rules_.push_back({uint8_t(Match::Exact), t, false, mq});
        }
      }
    }
  }
  return Status::success();
}

Status QuantConfig::Parser::fp8() {
  base.bits = 8;
  base.variant = "fp8";
  std::string fmt = lower(f.str("fmt").value_or("e4m3"));
  if (fmt != "e4m3")
    f.fail(concat("'fmt': expected e4m3, got '", fmt, "'"));
  std::vector<int64_t> block = f.integers("weight_block_size");
  if (block.size() == 2) {
    if (validBlock(f, "weight_block_size", block)) {
      base.blockN = block[0];
      base.blockK = block[1];
      base.strategy = "block";
    }
  } else if (!block.empty()) {
    f.fail("'weight_block_size': expected [n, k]");
  }
  std::string scheme = lower(f.str("activation_scheme").value_or("dynamic"));
  base.activation = {ScalarType::e4m3(),
                     scheme == "static" ? ActScaling::Static
                     : base.blockK      ? ActScaling::Group
                                        : ActScaling::Token,
                     scheme == "static" ? 0 : base.blockK};
  base.staticActivationScale = scheme == "static";
  addExcludes(f.strings("ignored_layers"), Match::Substring);
  addExcludes(f.strings("modules_to_not_convert"), Match::Substring);
  qc.default_ = base;
  return Status::success();
}

Status QuantConfig::Parser::modelopt() {
  std::string algo = f.str("quant_algo").value_or("");
  base.variant = algo;
  base.groupSize = f.integer("group_size").value_or(0);
  if (algo == "FP8") {
    base.bits = 8;
    base.strategy = "per_tensor";
    base.activation = {ScalarType::e4m3(), ActScaling::Static, 0};
    base.staticActivationScale = true;
  } else if (algo == "NVFP4") {
    base.bits = 4;
    base.groupSize = base.groupSize ? base.groupSize : 16;
    base.activation = {ScalarType::e2m1(), ActScaling::Group, base.groupSize};
  } else if (algo == "MXFP8") {
    base.bits = 8;
    base.groupSize = 32;
    base.activation = {ScalarType::e4m3(), ActScaling::Group, 32};
  } else if (f.ok()) {
    f.fail(concat("'quant_algo': expected FP8, NVFP4 or MXFP8, got '", algo,
                  "'",
                  algo == "W4A8_AWQ"
                      ? " (it needs per-channel activation pre-scaling, "
                        "pre_quant_scale, which Humming does not implement)"
                      : ""));
  }
  addExcludes(f.strings("exclude_modules"), Match::Glob);
  addExcludes(f.strings("ignore"), Match::Glob);
  qc.default_ = base;
  return Status::success();
}

Status QuantConfig::Parser::mxfp4() {
  base.bits = 4;
  base.groupSize = 32;
  base.variant = "mxfp4";
  addExcludes(f.strings("modules_to_not_convert"), Match::Substring);
  qc.default_ = base;
  return Status::success();
}

Status QuantConfig::Parser::bitnet() {
  base.bits = 2;
  base.variant = "bitnet";
  base.strategy = "per_tensor";
  base.activation = {ScalarType::sint(8), ActScaling::Token, 0};
  addExcludes(f.strings("modules_to_not_convert"), Match::Substring);
  qc.default_ = base;
  return Status::success();
}

bool QuantConfig::Parser::quarkSpec(const Json *spec, const std::string &path,
                                    ModuleQuantization &mq) {
  Fields s(spec, path);
  const Json *weight = s.object("weight");
  const Json *input = s.object("input_tensors");
  if (!s.ok()) {
    f.fail(s.error());
    return false;
  }
  if (!weight) {
    f.fail(path + ": expected 'weight'");
    return false;
  }
  Fields w(weight, path + ": weight");
  std::string dtype = lower(w.str("dtype").value_or(""));
  mq.variant = dtype;
  mq.strategy = lower(w.str("qscheme").value_or("per_tensor"));
  mq.groupSize = w.integer("group_size").value_or(0);
  mq.symmetric = w.boolean("symmetric").value_or(true);
  if (!w.ok()) {
    f.fail(w.error());
    return false;
  }
  if (dtype == "fp8_e4m3" || dtype == "int8")
    mq.bits = 8;
  else if (dtype == "int4" || dtype == "uint4" || dtype == "fp4")
    mq.bits = 4;
  else {
    f.fail(concat(path,
                  ": weight 'dtype': expected fp8_e4m3, int8, int4, "
                  "uint4 or fp4, got '",
                  dtype, "'"));
    return false;
  }
  if (dtype == "fp4")
    mq.groupSize = 32;
  if (mq.strategy != "per_group")
    mq.groupSize = 0;
  if (input) {
    Fields a(input, path + ": input_tensors");
    std::string adt = lower(a.str("dtype").value_or(""));
    bool isDynamic = a.boolean("is_dynamic").value_or(true);
    if (adt == "fp8_e4m3")
      mq.activation = {ScalarType::e4m3(),
                       isDynamic ? ActScaling::Token : ActScaling::Static, 0};
    else if (adt == "int8")
      mq.activation = {ScalarType::sint(8),
                       isDynamic ? ActScaling::Token : ActScaling::Static, 0};
    else if (adt == "fp4")
      mq.activation = {ScalarType::e2m1(), ActScaling::Group, 32};
    mq.staticActivationScale = !isDynamic;
  }
  return true;
}

Status QuantConfig::Parser::quark() {
  std::string pack = lower(f.str("pack_method").value_or(""));
  if (const Json *exp = f.object("export"))
    pack = lower(
        Fields(exp, qPath + ": export").str("pack_method").value_or(pack));
  addExcludes(f.strings("exclude"), Match::Glob);
  if (const Json *layers = f.object("layer_quant_config"))
    for (const auto &[pattern, spec] : layers->members()) {
      ModuleQuantization mq = base;
      if (!quarkSpec(&spec, qPath + ": layer_quant_config '" + pattern + "'",
                     mq))
        break;
      mq.strategy += pack == "reorder" ? "+reorder" : "";
      qc.rules_.push_back({uint8_t(Match::Glob), pattern, false, mq});
    }
  if (const Json *global = f.object("global_quant_config")) {
    ModuleQuantization mq = base;
    if (quarkSpec(global, qPath + ": global_quant_config", mq)) {
      mq.strategy += pack == "reorder" ? "+reorder" : "";
      qc.default_ = mq;
    }
  } else if (f.ok()) {
    f.fail("expected 'global_quant_config'");
  }
  return Status::success();
}

Result<QuantConfig> QuantConfig::fromJson(const Json &config,
                                          const Json *hfQuantConfig,
                                          const std::string &where) {
  QuantConfig qc;
  qc.where_ = where;
  Fields top(&config, where + "/config.json");
  std::string torchDType =
      top.str("torch_dtype").value_or(top.str("dtype").value_or("bfloat16"));
  if (!top.ok())
    return Error{top.error()};
  qc.paramDType_ = torchDType == "float16" || torchDType == "half"
                       ? DType::F16
                       : DType::BF16;
  InputSchema act16 = sixteenBit(qc.paramDType_);

  const Json *q = config.get("quantization_config");
  std::string qPath = where + "/config.json: quantization_config";
  std::string method;
  if (q) {
    if (!q->isObject())
      return Error{concat(qPath, ": expected an object, got ", q->kindName())};
    Fields f(q, qPath);
    method = lower(f.str("quant_method").value_or(""));
    if (!f.ok())
      return Error{f.error()};
  }
  const Json *modelopt = nullptr;
  if (hfQuantConfig) {
    modelopt = hfQuantConfig->get("quantization");
    if (!modelopt || !modelopt->isObject())
      return Error{concat(where, "/hf_quant_config.json: expected an object "
                                 "'quantization'")};
    if (method.empty() || method == "modelopt") {
      method = "modelopt";
      qPath = where + "/hf_quant_config.json: quantization";
      q = modelopt;
    }
  }
  if (!q)
    return Error{concat(where, ": no quantization_config in config.json and no "
                               "hf_quant_config.json: the checkpoint is not "
                               "quantized")};
  if (method.empty())
    return Error{concat(qPath, ": expected a 'quant_method'")};
  if (method == "auto_round")
    method = "auto-round";
  qc.method_ = method;
  Fields f(q, qPath);

  ModuleQuantization base;
  base.method = method;
  base.activation = act16;
  Parser parser{qc, f, method, qPath, base};
  // One reader per quant_method.
  static const std::pair<const char *, Status (Parser::*)()> readers[] = {
      {"gptq", &Parser::gptqFamily},
      {"awq", &Parser::gptqFamily},
      {"auto-round", &Parser::gptqFamily},
      {"compressed-tensors", &Parser::compressedTensors},
      {"fp8", &Parser::fp8},
      {"modelopt", &Parser::modelopt},
      {"mxfp4", &Parser::mxfp4},
      {"quark", &Parser::quark},
      {"bitnet", &Parser::bitnet}};
  const auto *reader =
      std::find_if(std::begin(readers), std::end(readers),
                   [&](const auto &r) { return method == r.first; });
  if (reader == std::end(readers))
    return Error{concat(qPath, ": quant_method '", method,
                        "' is not supported; expected one of gptq, awq, "
                        "auto-round, compressed-tensors, fp8, modelopt, "
                        "mxfp4, quark, bitnet")};
  Status read = (parser.*reader->second)();
  if (!read)
    return Error{read.error()};
  if (!f.ok())
    return Error{f.error()};
  return qc;
}

Result<QuantConfig> QuantConfig::fromCheckpoint(const Checkpoint &c) {
  return fromJson(c.config(), c.hfQuantConfig(), c.dir());
}

std::string formatWeightSchema(const WeightSchema &w) {
  std::ostringstream os;
  os << "#humming.weight_schema<type = " << w.type.str()
     << ", scale = " << w.scaleType.str();
  switch (w.granularity) {
  case Granularity::Channel:
    break;
  case Granularity::Group:
  case Granularity::GroupTensor:
    os << ", granularity = " << toString(w.granularity) << "<" << w.groupK
       << ">";
    break;
  case Granularity::Block:
    os << ", granularity = block<" << w.groupN << ", " << w.groupK << ">";
    break;
  case Granularity::Tensor:
    os << ", granularity = tensor";
    break;
  }
  if (w.zeroPoint != ZeroPointKind::None)
    os << ", zero_point = " << toString(w.zeroPoint);
  if (w.globalScale)
    os << ", global_scale = true";
  if (w.bias)
    os << ", bias = true";
  if (w.experts)
    os << ", experts = " << w.experts;
  if (w.padN)
    os << ", pad_n = " << w.padN;
  if (w.padK)
    os << ", pad_k = " << w.padK;
  if (w.format != SourceFormat::Canonical)
    os << ", format = " << toString(w.format);
  os << ">";
  return os.str();
}

std::string formatInputSchema(const InputSchema &in) {
  std::ostringstream os;
  os << "#humming.input_schema<type = " << in.type.str();
  if (in.scaling == ActScaling::Group)
    os << ", scaling = group<" << in.groupK << ">";
  else if (in.scaling != ActScaling::None)
    os << ", scaling = " << toString(in.scaling);
  os << ">";
  return os.str();
}

} // namespace humming
