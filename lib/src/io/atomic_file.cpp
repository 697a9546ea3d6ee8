#include "attn/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attn::io {
namespace {

std::string temporary_name(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

/// What a failed write does with the file it wrote: remove it (a temporary), or keep it (a device).
enum class OnFailure { kRemove, kKeep };

/// Writes `content` to `file`; errors name `target` (the path the user gave) and the system's reason.
void write_all(const std::string& file, const std::string& target, std::string_view content, OnFailure on_failure = OnFailure::kRemove,
               Durability durability = Durability::kCache) {
  const bool remove_on_failure = on_failure == OnFailure::kRemove;
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) throw std::runtime_error(target + ": cannot write: " + std::strerror(errno));
  errno = 0;
  bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  if (ok && durability == Durability::kToDisk) ok = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  int error = errno;
  const bool closed = std::fclose(f) == 0;
  if (!error) error = errno;
  if (!ok || !closed) {
    if (remove_on_failure) std::remove(file.c_str());
    throw std::runtime_error(target + ": cannot write: " + (error ? std::strerror(error) : "write failed") +
                             (remove_on_failure ? " (the previous file, if any, is unchanged)" : ""));
  }
}

void rename_into_place(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(from.c_str());
    throw std::runtime_error(to + ": cannot replace: " + why);
  }
}

/// Makes a rename in `path`'s directory durable (the directory's entry on disk).
void sync_directory_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // nothing more to do where a directory cannot be opened
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view content, Durability durability) {
  // A symlink (/dev/stdout), a pipe or a device: written in place (renaming over it would replace
  // the link or the device node instead of writing where it leads).
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    write_all(path, path, content, OnFailure::kKeep);
    return;
  }
  write_atomic(path, [&](const std::string& tmp) { write_all(tmp, path, content, OnFailure::kRemove, durability); });
  if (durability == Durability::kToDisk) sync_directory_of(path);
}

void write_atomic(const std::string& path, const std::function<void(const std::string& temporary)>& write) {
  const std::string tmp = temporary_name(path);
  try {
    write(tmp);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  rename_into_place(tmp, path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return ss.str();
}

void ensure_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw std::runtime_error(dir + ": cannot create directory" + (ec ? ": " + ec.message() : std::string()));
}

void StagedFiles::add(const std::string& path, std::string_view content) {
  const std::string tmp = temporary_name(path);
  write_all(tmp, path, content);
  staged_.emplace_back(tmp, path);
}

void StagedFiles::write(const std::string& temporary, std::string_view content) const {
  for (const auto& [tmp, path] : staged_)
    if (tmp == temporary) return write_all(tmp, path, content);
  throw std::logic_error("StagedFiles::write: " + temporary + " was not staged");
}

std::string StagedFiles::stage(const std::string& path) {
  const std::string tmp = temporary_name(path);
  staged_.emplace_back(tmp, path);
  return tmp;
}

void StagedFiles::commit() {
  for (const auto& [tmp, path] : staged_) rename_into_place(tmp, path);
  staged_.clear();
}

StagedFiles::~StagedFiles() {
  for (const auto& [tmp, path] : staged_) std::remove(tmp.c_str());
}

}  // namespace attn::io
