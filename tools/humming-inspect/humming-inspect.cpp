//===- humming-inspect.cpp - Describe a quantized checkpoint --------------===//
//
//   humming-inspect <model-dir> [--target=<device>] [--json] [--layer=<name>]
//
// Prints each quantized layer of a model directory: its name, shape, the
// checkpoint format, the canonical #humming.weight_schema, its bytes, and what
// Humming will run it as on the target device (activations, with the reason
// for any fallback); then a summary. Errors name the file and the field; the
// exit status is 1 when any layer could not be read.
//
// Host-only: links the numerics, the chip table and LLVMSupport (options),
// no MLIR.
//
//===----------------------------------------------------------------------===//

#include "ToolVersion.h"
#include "Humming/Quant/Adapters.h"
#include "Humming/Target/ArchInfo.h"

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

using namespace humming;

namespace {
std::string shapeText(const LoadedLayer &l) {
  std::string s;
  if (l.weight.experts)
    s = std::to_string(l.weight.experts) + " x ";
  return s + std::to_string(l.n) + " x " + std::to_string(l.k);
}

/// "w4a16", "w8a8": weight and activation widths.
std::string shortName(const LoadedLayer &l, const InputSchema &in) {
  return "w" + std::to_string(l.weight.type.bits) + "a" +
         std::to_string(in.type.bits);
}
} // namespace

namespace cl = llvm::cl;
static cl::OptionCategory category("humming-inspect options");
static cl::opt<std::string> dir(cl::Positional, cl::Required,
                                cl::desc("<model-dir>"), cl::cat(category));
static cl::opt<std::string>
    device("target",
           cl::desc("The device the layers are to run on (a known device: "
                    "see the error for an unknown one)"),
           cl::value_desc("device"), cl::init("H200"), cl::cat(category));
static cl::opt<bool> json("json", cl::desc("Print one JSON document"),
                          cl::cat(category));
static cl::opt<std::string> only("layer", cl::desc("Only this layer"),
                                 cl::value_desc("name"), cl::cat(category));

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  humming::tools::installVersionPrinter("humming-inspect");
  cl::ParseCommandLineOptions(
      argc, argv, "humming-inspect: describe a quantized checkpoint\n");
  const DeviceInfo *target = lookupDevice(device);
  if (!target) {
    std::fprintf(stderr, "humming-inspect: unknown device '%s'; expected one "
                         "of %s\n",
                 device.c_str(), knownDeviceNames().c_str());
    return 2;
  }
  Chip chip = *Chip::parse(target->chip);

  // A checkpoint that cannot be read at all: with --json, still one JSON
  // document (with an "error" member) on stdout, for tools that parse it.
  auto fatal = [&](const std::string &message) {
    if (json)
      std::printf("%s\n", Json::object({{"model", Json::string(dir)},
                                        {"error", Json::string(message)}})
                              .dump(2)
                              .c_str());
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return 1;
  };
  Result<Checkpoint> ckpt = Checkpoint::open(dir);
  if (!ckpt)
    return fatal(ckpt.error());
  Result<QuantConfig> config = QuantConfig::fromCheckpoint(*ckpt);
  if (!config)
    return fatal(config.error());
  std::vector<std::string> modules = quantizedModules(*ckpt, *config);
  if (!only.empty()) {
    if (std::find(modules.begin(), modules.end(), only) == modules.end())
      return fatal(concat(dir, ": no quantized layer '", only, "' (",
                          modules.size(), " layers)"));
    modules = {only};
  }

  Json layers = Json::array();
  std::map<std::string, int> perFormat;
  size_t totalBytes = 0;
  int failures = 0;
  bool paramIsF16 = config->paramDType() == DType::F16;
  for (const std::string &m : modules) {
    Result<LoadedLayer> l = loadLayer(*ckpt, *config, m);
    if (!l) {
      ++failures;
      if (json)
        layers.push(Json::object({{"name", Json::string(m)},
                                  {"error", Json::string(l.error())}}));
      else
        std::printf("%s\n  error: %s\n", m.c_str(), l.error().c_str());
      continue;
    }
    ActivationChoice choice =
        chooseActivation(l->weight, l->input, chip, paramIsF16, l->n, l->k);
    std::string runsAs = shortName(*l, choice.input) + " (" +
                         formatInputSchema(choice.input) + ")";
    totalBytes += l->bytes();
    ++perFormat[l->source.describe()];
    if (json) {
      Json notes = Json::array();
      for (const std::string &n : l->notes)
        notes.push(Json::string(n));
      Json entry = Json::object(
          {{"name", Json::string(m)},
           {"n", Json::integer(l->n)},
           {"k", Json::integer(l->k)},
           {"experts", Json::integer(l->weight.experts)},
           {"format", Json::string(l->source.describe())},
           {"weight_schema", Json::string(formatWeightSchema(l->weight))},
           {"requested_input_schema", Json::string(formatInputSchema(l->input))},
           {"input_schema", Json::string(formatInputSchema(choice.input))},
           {"runs_as", Json::string(shortName(*l, choice.input))},
           {"bytes", Json::integer(int64_t(l->bytes()))},
           {"act_order", Json::boolean(!l->kPermutation.empty())},
           {"notes", std::move(notes)}});
      if (!choice.fallbackReason.empty())
        entry.append("fallback", Json::string(choice.fallbackReason));
      layers.push(std::move(entry));
      continue;
    }
    std::printf("%s\n", m.c_str());
    std::printf("  shape   %s\n", shapeText(*l).c_str());
    std::printf("  format  %s\n", l->source.describe().c_str());
    std::printf("  schema  %s\n", formatWeightSchema(l->weight).c_str());
    std::printf("  bytes   %zu\n", l->bytes());
    std::printf("  runs as %s on %s\n", runsAs.c_str(), target->name.c_str());
    if (!choice.fallbackReason.empty())
      std::printf("  because %s\n", choice.fallbackReason.c_str());
    for (const std::string &n : l->notes)
      std::printf("  note    %s\n", n.c_str());
  }

  if (json) {
    Json formats = Json::object();
    for (const auto &[f, count] : perFormat)
      formats.append(f, Json::integer(count));
    Json out = Json::object(
        {{"model", Json::string(dir)},
         {"quant_method", Json::string(config->method())},
         {"target", Json::string(target->name)},
         {"chip", Json::string(chip.str())},
         {"layers", std::move(layers)},
         {"summary", Json::object({{"quantized_layers", Json::integer(int64_t(modules.size()))},
                                   {"errors", Json::integer(failures)},
                                   {"bytes", Json::integer(int64_t(totalBytes))},
                                   {"formats", std::move(formats)}})}});
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("\nsummary: %zu quantized layer%s (%s, target %s %s), %zu bytes, "
                "%d errors\n",
                modules.size(), modules.size() == 1 ? "" : "s",
                config->method().c_str(), target->name.c_str(),
                chip.str().c_str(), totalBytes, failures);
    for (const auto &[f, count] : perFormat)
      std::printf("  %4d x %s\n", count, f.c_str());
  }
  return failures ? 1 : 0;
}
