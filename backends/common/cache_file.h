// File handling the drivers' on-disk caches share: whole-file reads that tell a missing file from an
// unreadable one, and atomic writes (a temporary file in the same folder, renamed into place), so that
// readers in other processes see either the old entry or the whole new one, never a partial write. What goes
// in the files (their headers and checksums) is each cache's own format. Header only, like driver_util.h.
#ifndef KILN_BACKENDS_COMMON_CACHE_FILE_H_
#define KILN_BACKENDS_COMMON_CACHE_FILE_H_

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace kiln {
namespace driver {

// Creates `path` and its missing parents. False when it cannot, or when `path` exists but is no folder.
inline bool MakeDirs(const std::string& path) {
  if (path.empty()) return false;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !MakeDirs(path.substr(0, slash))) return false;
  return mkdir(path.c_str(), 0755) == 0 || errno == EEXIST;
}

enum class FileReadResult { kRead, kAbsent, kFailed };

// Reads the whole of `path` into `out_contents`. kAbsent: there is no such file; kFailed: it exists but could
// not be read, and `out_problem` says why.
inline FileReadResult ReadWholeFile(const std::string& path, std::string* out_contents,
                                    std::string* out_problem) {
  out_contents->clear();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return FileReadResult::kAbsent;
    *out_problem = path + ": cannot open: " + strerror(errno);
    return FileReadResult::kFailed;
  }
  struct stat st;
  bool read_ok = fstat(fd, &st) == 0;
  if (read_ok) {
    out_contents->resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out_contents->size()) {
      ssize_t n = read(fd, &(*out_contents)[done], out_contents->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    read_ok = done == out_contents->size();
  }
  close(fd);
  if (!read_ok) {
    *out_problem = path + ": read failed";
    return FileReadResult::kFailed;
  }
  return FileReadResult::kRead;
}

inline bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Writes `header` then `body` (header_size and body_size bytes) to `path` atomically, creating its folder as
// needed. The temporary name is unique per process and call, so concurrent writers never share one. False
// with `out_problem` set when the entry could not be written; no temporary file is left behind.
inline bool WriteFileAtomically(const std::string& path, const void* header, size_t header_size,
                                const void* body, size_t body_size, std::string* out_problem) {
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !MakeDirs(path.substr(0, slash))) {
    *out_problem = path.substr(0, slash) + ": cannot create the cache folder: " + strerror(errno);
    return false;
  }
  static std::atomic<uint64_t> counter{0};
  const std::string temp_path =
      path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1));
  int fd = open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *out_problem = temp_path + ": cannot create: " + strerror(errno);
    return false;
  }
  bool ok = WriteAll(fd, header, header_size) && WriteAll(fd, body, body_size);
  ok = (close(fd) == 0) && ok;
  if (ok && rename(temp_path.c_str(), path.c_str()) != 0) ok = false;
  if (!ok) {
    *out_problem = path + ": write failed: " + strerror(errno);
    unlink(temp_path.c_str());
  }
  return ok;
}

}  // namespace driver
}  // namespace kiln

#endif  // KILN_BACKENDS_COMMON_CACHE_FILE_H_
