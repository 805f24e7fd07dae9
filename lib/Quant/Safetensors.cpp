//===- Safetensors.cpp - safetensors files and checkpoint dirs ------------===//

#include "Humming/Quant/Safetensors.h"
#include "Humming/Quant/Checked.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace humming {

namespace {
/// The largest header we read (the format's own limit is 100 MB).
constexpr uint64_t kMaxHeader = 100ull << 20;
/// The most elements a tensor may have (counting a zero size as 1): 2^48,
/// far past any checkpoint; each of its sizes is then at most 2^48 too, so
/// a size times a bit width and a pack factor stays within int64 (products
/// of sizes from different tensors go through checkedMul).
constexpr int64_t kMaxElements = int64_t(1) << 48;
/// The longest tensor name (checkpoints' are under 200 bytes).
constexpr size_t kMaxName = 1024;

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
} // namespace

/// The bytes of a file: a private mapping, or an owned vector.
struct SafetensorsFile::Storage {
  const uint8_t *data = nullptr;
  size_t size = 0;
  void *mapping = nullptr;
  std::vector<uint8_t> owned;
  ~Storage() {
    if (mapping)
      munmap(mapping, size);
  }
};

Result<SafetensorsFile> SafetensorsFile::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Error{concat(path, ": cannot open: ", std::strerror(errno))};
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error{concat(path, ": cannot stat: ", std::strerror(err))};
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{concat(path, ": expected a safetensors file, got ",
                        S_ISDIR(st.st_mode) ? "a directory" : "a special file")};
  }
  auto storage = std::make_shared<Storage>();
  storage->size = size_t(st.st_size);
  if (storage->size > 0) {
    void *m = mmap(nullptr, storage->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Error{concat(path, ": cannot map: ", std::strerror(err))};
    }
    storage->mapping = m;
    storage->data = static_cast<const uint8_t *>(m);
  }
  ::close(fd);
  return parse(std::move(storage), path);
}

Result<SafetensorsFile> SafetensorsFile::fromBytes(std::vector<uint8_t> bytes,
                                                   std::string name) {
  auto storage = std::make_shared<Storage>();
  storage->owned = std::move(bytes);
  storage->data = storage->owned.data();
  storage->size = storage->owned.size();
  return parse(std::move(storage), std::move(name));
}

Result<SafetensorsFile>
SafetensorsFile::parse(std::shared_ptr<const Storage> storage,
                       std::string name) {
  const uint8_t *p = storage->data;
  size_t size = storage->size;
  if (size < 8)
    return Error{concat(name, ": expected at least 8 bytes (the header length), "
                           "got ",
                     size)};
  uint64_t headerLen = 0;
  for (int i = 0; i < 8; ++i)
    headerLen |= uint64_t(p[i]) << (8 * i);
  if (headerLen > kMaxHeader)
    return Error{concat(name, ": header length ", headerLen,
                     " exceeds the 100 MiB limit")};
  if (headerLen > size - 8)
    return Error{concat(name, ": header length ", headerLen,
                     " runs past the end of the file (", size, " bytes)")};
  std::string_view headerText(reinterpret_cast<const char *>(p + 8),
                              size_t(headerLen));
  Result<Json> header = parseJson(headerText);
  if (!header)
    return Error{concat(name, ": invalid JSON header: ", header.error())};
  if (!header->isObject())
    return Error{concat(name, ": expected the header to be an object, got ",
                     header->kindName())};

  SafetensorsFile file;
  file.storage_ = storage;
  file.path_ = std::move(name);
  file.buffer_ = p + 8 + headerLen;
  file.bufferSize_ = size - 8 - size_t(headerLen);
  const std::string &fname = file.path_;

  for (const auto &[key, value] : header->members()) {
    if (key == "__metadata__") {
      if (!value.isObject())
        return Error{concat(fname, ": expected __metadata__ to be an object, got ",
                         value.kindName())};
      for (const auto &[mk, mv] : value.members()) {
        if (!mv.isString())
          return Error{concat(fname, ": __metadata__ '", mk,
                           "': expected a string, got ", mv.kindName())};
        file.metadata_.emplace_back(mk, mv.asString());
      }
      continue;
    }
    // Names are matched against the configs' regular expressions, which
    // recurse per character: a name of megabytes would exhaust the stack.
    if (key.size() > kMaxName)
      return Error{concat(fname, ": a tensor name of ", key.size(),
                          " bytes (starting '", key.substr(0, 32),
                          "'): expected at most ", kMaxName)};
    const std::string &tensorName = key;
    auto where = [&] { return concat(fname, ": tensor '", tensorName, "': "); };
    if (!value.isObject())
      return Error{concat(where(), "expected an object, got ", value.kindName())};
    const Json *dtype = value.get("dtype");
    const Json *shape = value.get("shape");
    const Json *offsets = value.get("data_offsets");
    if (!dtype || !dtype->isString())
      return Error{concat(where(), "expected a string 'dtype'")};
    if (!shape || !shape->isArray())
      return Error{concat(where(), "expected an array 'shape'")};
    if (!offsets || !offsets->isArray() || offsets->items().size() != 2)
      return Error{concat(where(), "expected 'data_offsets' [begin, end]")};
    SafetensorsEntry e;
    e.name = key;
    std::optional<DType> d = parseDType(dtype->asString());
    if (!d)
      return Error{concat(where(), "unknown dtype '", dtype->asString(), "'")};
    e.dtype = *d;
    // Bounded with its zero dimensions left out: [0, 2^62] holds no
    // element but would overflow any product of its sizes downstream.
    uint64_t numel = 1;
    int64_t nonZero = 1;
    for (const Json &dim : shape->items()) {
      if (!dim.isInteger() || dim.asInteger() < 0)
        return Error{concat(where(), "expected non-negative integer dimensions, "
                                  "got ",
                         dim.dump())};
      int64_t v = dim.asInteger();
      std::optional<int64_t> product = checkedMul(nonZero, v ? v : 1);
      if (!product || *product > kMaxElements)
        return Error{concat(where(), "shape ", shape->dump(),
                            " is too large (the product of its non-zero "
                            "sizes must be at most 2^48)")};
      nonZero = *product;
      numel *= uint64_t(v);
      e.shape.push_back(v);
    }
    for (const Json &o : offsets->items())
      if (!o.isInteger() || o.asInteger() < 0)
        return Error{concat(where(), "expected non-negative integer data_offsets, "
                                  "got ",
                         offsets->dump())};
    e.begin = uint64_t(offsets->items()[0].asInteger());
    e.end = uint64_t(offsets->items()[1].asInteger());
    if (e.begin > e.end || e.end > file.bufferSize_)
      return Error{concat(where(), "data_offsets [", e.begin, ", ", e.end,
                       "] lie outside the ", file.bufferSize_,
                       "-byte data buffer")};
    uint64_t need = storageBytes(e.dtype, int64_t(numel));
    if (e.end - e.begin != need)
      return Error{concat(where(), "dtype ", dtypeName(e.dtype), " with shape ",
                       shapeString(e.shape), " needs ", need,
                       " bytes, data_offsets give ", e.end - e.begin)};
    file.index_.emplace(e.name, file.entries_.size());
    file.entries_.push_back(std::move(e));
  }

  // The tensors must tile the data buffer: no overlap, no hole.
  std::vector<const SafetensorsEntry *> byOffset;
  for (const SafetensorsEntry &e : file.entries_)
    byOffset.push_back(&e);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const SafetensorsEntry *a, const SafetensorsEntry *b) {
              return a->begin != b->begin ? a->begin < b->begin
                                          : a->end < b->end;
            });
  uint64_t cursor = 0;
  const SafetensorsEntry *previous = nullptr;
  for (const SafetensorsEntry *e : byOffset) {
    if (e->begin < cursor)
      return Error{concat(fname, ": tensor '", e->name, "' (bytes ", e->begin,
                       "..", e->end, ") overlaps tensor '", previous->name,
                       "' (bytes ", previous->begin, "..", previous->end, ")")};
    if (e->begin > cursor)
      return Error{concat(fname, ": bytes ", cursor, "..", e->begin,
                       " of the data buffer belong to no tensor (before '",
                       e->name, "')")};
    cursor = e->end;
    previous = e;
  }
  if (cursor != file.bufferSize_)
    return Error{concat(fname, ": the data buffer has ", file.bufferSize_,
                     " bytes but the tensors end at byte ", cursor)};
  return file;
}

const SafetensorsEntry *SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

Result<TensorView> SafetensorsFile::tensor(std::string_view name) const {
  const SafetensorsEntry *e = find(name);
  if (!e)
    return Error{concat(path_, ": no tensor '", name, "'")};
  return TensorView{e->dtype, e->shape, buffer_ + e->begin,
                    size_t(e->end - e->begin)};
}

std::vector<uint8_t> serializeSafetensors(
    const std::vector<std::pair<std::string, TensorView>> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto &[k, v] : metadata)
      meta.append(k, Json::string(v));
    header.append("__metadata__", std::move(meta));
  }
  uint64_t offset = 0;
  for (const auto &[name, view] : tensors) {
    Json shape = Json::array();
    for (int64_t d : view.shape)
      shape.push(Json::integer(d));
    Json offsets = Json::array(
        {Json::integer(int64_t(offset)),
         Json::integer(int64_t(offset + view.nbytes))});
    header.append(name, Json::object({{"dtype", Json::string(dtypeName(view.dtype))},
                                      {"shape", std::move(shape)},
                                      {"data_offsets", std::move(offsets)}}));
    offset += view.nbytes;
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8)
    text.push_back(' '); // the format pads the header to 8 bytes
  std::vector<uint8_t> out(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i)
    out[size_t(i)] = uint8_t(uint64_t(text.size()) >> (8 * i));
  std::memcpy(out.data() + 8, text.data(), text.size());
  uint8_t *cursor = out.data() + 8 + text.size();
  for (const auto &[name, view] : tensors) {
    if (view.nbytes)
      std::memcpy(cursor, view.data, view.nbytes);
    cursor += view.nbytes;
  }
  return out;
}

Status writeSafetensors(
    const std::string &path,
    const std::vector<std::pair<std::string, TensorView>> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata) {
  std::vector<uint8_t> bytes = serializeSafetensors(tensors, metadata);
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return Error{concat(path, ": cannot write")};
  out.write(reinterpret_cast<const char *>(bytes.data()),
            std::streamsize(bytes.size()));
  if (!out)
    return Error{concat(path, ": write failed")};
  return Status::success();
}

Result<std::string> readTextFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error{concat(path, ": cannot open")};
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

Result<Json> readJsonFile(const std::string &path) {
  Result<std::string> text = readTextFile(path);
  if (!text)
    return Error{text.error()};
  Result<Json> j = parseJson(*text);
  if (!j)
    return Error{concat(path, ": ", j.error())};
  return j;
}

Result<Checkpoint> Checkpoint::open(const std::string &dir) {
  Checkpoint c;
  c.dir_ = dir;
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error{concat(dir, ": not a directory")};
  auto pathOf = [&](const std::string &f) { return dir + "/" + f; };
  auto exists = [&](const std::string &f) {
    struct stat s;
    return stat(pathOf(f).c_str(), &s) == 0;
  };
  if (exists("config.json")) {
    Result<Json> cfg = readJsonFile(pathOf("config.json"));
    if (!cfg)
      return Error{cfg.error()};
    if (!cfg->isObject())
      return Error{concat(pathOf("config.json"), ": expected an object, got ",
                       cfg->kindName())};
    c.config_ = cfg.take();
  }
  if (exists("hf_quant_config.json")) {
    Result<Json> q = readJsonFile(pathOf("hf_quant_config.json"));
    if (!q)
      return Error{q.error()};
    c.hfQuantConfig_ = q.take();
    c.hasHfQuantConfig_ = true;
  }

  std::vector<std::string> files;
  std::unordered_map<std::string, std::string> indexMap;
  const std::string indexName = "model.safetensors.index.json";
  if (exists(indexName)) {
    Result<Json> index = readJsonFile(pathOf(indexName));
    if (!index)
      return Error{index.error()};
    const Json *map = index->get("weight_map");
    if (!map || !map->isObject())
      return Error{concat(pathOf(indexName), ": expected an object 'weight_map'")};
    if (map->members().empty())
      return Error{concat(pathOf(indexName),
                          ": expected 'weight_map' to map tensor names to "
                          "files, got an empty object")};
    for (const auto &[tensor, file] : map->members()) {
      if (!file.isString())
        return Error{concat(pathOf(indexName), ": weight_map '", tensor,
                         "': expected a file name, got ", file.kindName())};
      const std::string &fn = file.asString();
      if (fn.empty() || fn == "." || fn == ".." ||
          fn.find('/') != std::string::npos)
        return Error{concat(pathOf(indexName), ": weight_map '", tensor,
                         "': expected the name of a file in the directory, "
                         "got '", fn, "'")};
      indexMap[tensor] = file.asString();
      if (std::find(files.begin(), files.end(), file.asString()) == files.end())
        files.push_back(file.asString());
    }
  } else {
    DIR *d = opendir(dir.c_str());
    if (!d)
      return Error{concat(dir, ": cannot list: ", std::strerror(errno))};
    while (dirent *ent = readdir(d)) {
      std::string name = ent->d_name;
      if (endsWith(name, ".safetensors"))
        files.push_back(name);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  if (files.empty())
    return Error{concat(dir, ": no .safetensors files")};
  for (const std::string &f : files) {
    if (!exists(f))
      return Error{concat(pathOf(indexName), " names '", f,
                       "', which does not exist")};
    Result<SafetensorsFile> sf = SafetensorsFile::open(pathOf(f));
    if (!sf)
      return Error{sf.error()};
    if (Status s = c.addFile(sf.take()); !s)
      return Error{s.error()};
  }
  for (const auto &[tensor, file] : indexMap) {
    auto it = c.where_.find(tensor);
    if (it == c.where_.end() || c.files_[it->second].path() != pathOf(file))
      return Error{concat(pathOf(indexName), " maps '", tensor, "' to '", file,
                       "', which does not hold it")};
  }
  return c;
}

Status Checkpoint::addFile(SafetensorsFile file) {
  size_t fi = files_.size();
  for (const SafetensorsEntry &e : file.entries()) {
    auto [it, inserted] = where_.emplace(e.name, fi);
    if (!inserted)
      return Error{concat(dir_, ": tensor '", e.name, "' is in both ",
                          files_[it->second].path(), " and ", file.path())};
  }
  files_.push_back(std::move(file));
  return Status::success();
}

Result<Checkpoint> Checkpoint::fromParts(std::string name, Json config,
                                         const Json *hfQuantConfig,
                                         std::vector<SafetensorsFile> files) {
  Checkpoint c;
  c.dir_ = std::move(name);
  if (!config.isObject())
    return Error{concat(c.dir_, "/config.json: expected an object, got ",
                        config.kindName())};
  c.config_ = std::move(config);
  if (hfQuantConfig) {
    c.hfQuantConfig_ = *hfQuantConfig;
    c.hasHfQuantConfig_ = true;
  }
  if (files.empty())
    return Error{concat(c.dir_, ": expected at least one safetensors file")};
  for (SafetensorsFile &f : files)
    if (Status s = c.addFile(std::move(f)); !s)
      return Error{s.error()};
  return c;
}

bool Checkpoint::has(std::string_view tensor) const {
  return where_.count(std::string(tensor)) != 0;
}

Result<TensorView> Checkpoint::tensor(std::string_view name) const {
  auto it = where_.find(std::string(name));
  if (it == where_.end())
    return Error{concat(dir_, ": no tensor '", name, "' in ", files_.size(),
                     " safetensors file", files_.size() == 1 ? "" : "s")};
  return files_[it->second].tensor(name);
}

std::vector<std::string> Checkpoint::tensorNames() const {
  std::vector<std::string> names;
  for (const auto &[name, file] : where_)
    names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string Checkpoint::fileOf(std::string_view tensor) const {
  auto it = where_.find(std::string(tensor));
  return it == where_.end() ? std::string() : files_[it->second].path();
}

} // namespace humming
