#pragma once
/// Writing files so a reader never sees half of one: content goes to a temporary file in the same
/// directory, which is renamed over the target only when complete.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::io {

/// The one way attn writes a file: `write` receives a temporary path beside `path` and writes the
/// whole file there; only when it returns is the temporary renamed over `path`. If `write` throws,
/// the temporary is removed and `path` keeps its previous content.
void write_atomic(const std::string& path, const std::function<void(const std::string& temporary)>& write);

/// Whether a write waits until the file is on disk: kToDisk for what a run resumes from (after a
/// power cut the previous or the new file is there, whole: the file and its directory are fsynced),
/// kCache for the rest (the system writes it back when it will; a crash of attn loses nothing).
enum class Durability { kCache, kToDisk };

/// Writes `content` to `path` atomically (write_atomic); throws std::runtime_error naming the path on failure.
/// A path that exists and is not a regular file (a symlink such as /dev/stdout, a pipe, a device)
/// is written in place.
void write_file_atomic(const std::string& path, std::string_view content, Durability durability = Durability::kCache);

/// Reads a whole file; throws std::runtime_error naming the path on failure.
std::string read_file(const std::string& path);

/// Creates `dir` (and parents) if missing; throws std::runtime_error naming it on failure.
void ensure_directory(const std::string& dir);

/// A set of files that appear together or not at all (as far as a filesystem allows): add() writes
/// each to a temporary name, commit() renames them all into place; the destructor removes the
/// temporaries of an uncommitted set.
class StagedFiles {
 public:
  StagedFiles() = default;
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles();
  void add(const std::string& path, std::string_view content);
  /// Registers `path` and returns the temporary name the caller writes it to.
  std::string stage(const std::string& path);
  /// Writes `content` to a temporary that stage() returned, from any thread, as long as no stage()
  /// or add() runs meanwhile (they change the set this reads).
  void write(const std::string& temporary, std::string_view content) const;
  void commit();

 private:
  std::vector<std::pair<std::string, std::string>> staged_;  // (temporary, final)
};

}  // namespace attn::io
