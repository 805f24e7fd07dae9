//===- Safetensors.h - safetensors files and checkpoint dirs ----*- C++ -*-===//
//
// A validating, memory-mapped safetensors reader (zero-copy TensorViews), a
// writer (for tests and tools), and a checkpoint directory: config.json,
// hf_quant_config.json and model.safetensors, a sharded index, or every
// *.safetensors file. A malformed file is reported with the file and the
// tensor name; nothing is ever read outside the mapped buffer.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_SAFETENSORS_H
#define HUMMING_QUANT_SAFETENSORS_H

#include "Humming/Quant/Json.h"
#include "Humming/Quant/Result.h"
#include "Humming/Quant/Tensor.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace humming {

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; ///< offsets into the data buffer
};

class SafetensorsFile {
public:
  /// Memory-maps and validates `path`.
  static Result<SafetensorsFile> open(const std::string &path);
  /// Validates an in-memory file; `name` stands for the path in messages.
  static Result<SafetensorsFile> fromBytes(std::vector<uint8_t> bytes,
                                           std::string name);

  const std::string &path() const { return path_; }
  const std::vector<SafetensorsEntry> &entries() const { return entries_; }
  const SafetensorsEntry *find(std::string_view name) const;
  /// A view of tensor `name`, or "<file>: no tensor '<name>'".
  Result<TensorView> tensor(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>> &metadata() const {
    return metadata_;
  }

private:
  struct Storage;
  static Result<SafetensorsFile> parse(std::shared_ptr<const Storage> storage,
                                       std::string name);

  std::shared_ptr<const Storage> storage_;
  std::string path_;
  const uint8_t *buffer_ = nullptr; ///< start of the data buffer
  size_t bufferSize_ = 0;
  std::vector<SafetensorsEntry> entries_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

/// The bytes of a safetensors file holding `tensors` (in that order).
std::vector<uint8_t>
serializeSafetensors(const std::vector<std::pair<std::string, TensorView>> &tensors,
                     const std::vector<std::pair<std::string, std::string>>
                         &metadata = {});
Status writeSafetensors(const std::string &path,
                        const std::vector<std::pair<std::string, TensorView>> &tensors,
                        const std::vector<std::pair<std::string, std::string>>
                            &metadata = {});

/// A model directory.
class Checkpoint {
public:
  static Result<Checkpoint> open(const std::string &dir);
  /// A checkpoint from files already read (tests, the fuzz targets, hosts
  /// that hold the files in memory); `name` stands for the directory in
  /// messages. `config` must be an object, as config.json.
  static Result<Checkpoint> fromParts(std::string name, Json config,
                                      const Json *hfQuantConfig,
                                      std::vector<SafetensorsFile> files);

  const std::string &dir() const { return dir_; }
  /// config.json (an empty object when the directory has none).
  const Json &config() const { return config_; }
  /// hf_quant_config.json, when present.
  const Json *hfQuantConfig() const {
    return hasHfQuantConfig_ ? &hfQuantConfig_ : nullptr;
  }
  bool has(std::string_view tensor) const;
  Result<TensorView> tensor(std::string_view name) const;
  /// Every tensor name, sorted.
  std::vector<std::string> tensorNames() const;
  /// The file that holds `tensor` (for messages).
  std::string fileOf(std::string_view tensor) const;

private:
  /// Adds a file's tensors; a name already held by another file is an error.
  Status addFile(SafetensorsFile file);

  std::string dir_;
  Json config_ = Json::object();
  Json hfQuantConfig_;
  bool hasHfQuantConfig_ = false;
  std::vector<SafetensorsFile> files_;
  std::unordered_map<std::string, size_t> where_;
};

/// Reads a whole file (for configs); errors name the path.
Result<std::string> readTextFile(const std::string &path);
/// Reads and parses a JSON file; errors name the path, line and column.
Result<Json> readJsonFile(const std::string &path);

} // namespace humming

#endif // HUMMING_QUANT_SAFETENSORS_H
