// Just-in-time fused blocks: emit, compile with the build's compiler, cache,
// load (codegen/jit.h).
#include "codegen/jit.h"

#include "vm/options.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "backends/random.h"
#include "support/output_file.h"
#include "support/status.h"
#include "codegen/codegen.h"
#include "codegen/jit_headers.h"

extern char** environ;

namespace autobatch {
namespace {

namespace fs = std::filesystem;

// Bumped when the prelude or the library's entry point changes.
constexpr int kJitFormat = 3;
constexpr char kEntry[] = "autobatch_jit_entry";
constexpr char kHint[] =
    "; run without the JIT (omit --fused / CallOptions::jit_fused_blocks, or --compiled / "
    "CallOptions::jit_compiled_program)";

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

std::string CacheDir(const JitOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  if (const char* dir = std::getenv("AUTOBATCH_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return absl::StrCat(xdg, "/autobatch");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return absl::StrCat(home, "/.cache/autobatch");
  }
  return absl::StrCat("/tmp/autobatch-cache-", geteuid());
}

// The cache holds code this process will run, so it must be ours alone: a
// directory (or library) that another user owns or may write is refused, and
// so is a symbolic link (lstat: a link's target could be swapped after the
// check, e.g. a /tmp/autobatch-cache-<uid> planted by another user).
absl::Status CheckPrivate(const fs::path& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    return absl::UnavailableError(absl::StrCat("JIT fused blocks: cannot stat ", path.string(),
                                               " (", std::strerror(errno), ")", kHint));
  }
  if (S_ISLNK(st.st_mode)) {
    return absl::UnavailableError(absl::StrCat(
        "JIT fused blocks: ", path.string(),
        " is a symbolic link, so its code is not run; name the directory it points to "
        "(AUTOBATCH_CACHE_DIR or JitOptions::cache_dir)", kHint));
  }
  if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "JIT fused blocks: ", path.string(),
        " is writable by other users or not owned by this one, so its code is not run; use a "
        "private cache directory (AUTOBATCH_CACHE_DIR or JitOptions::cache_dir)", kHint));
  }
  return absl::OkStatus();
}

// A symbolic link anywhere in the cache directory's path is refused, however
// the path is spelled: lstat() of "link/" or "link/." follows the link, so
// each component is checked on its own ("link/sub/.." is caught at "link").
// Links that root owns (/var/run -> /run) are system layout that only root
// can change, and are allowed unless this process is root.
absl::Status RefuseSymlinkedPath(const std::string& dir) {
  std::error_code error;
  const fs::path absolute = fs::absolute(dir, error);
  if (error) {
    return absl::UnavailableError(absl::StrCat("JIT fused blocks: cannot resolve the cache "
                                               "directory ", dir, " (", error.message(), ")",
                                               kHint));
  }
  fs::path prefix;
  for (const fs::path& part : absolute) {
    if (part.empty() || part == ".") continue;
    prefix /= part;
    if (prefix == absolute.root_path()) continue;
    struct stat st {};
    if (lstat(prefix.c_str(), &st) != 0) break;  // created later, as a directory
    if (S_ISLNK(st.st_mode) && (st.st_uid != 0 || geteuid() == 0)) {
      return absl::UnavailableError(absl::StrCat(
          "JIT fused blocks: the cache directory ", dir, " goes through ", prefix.string(),
          ", which is a symbolic link, so its code is not run; name the directory it points to "
          "(AUTOBATCH_CACHE_DIR or JitOptions::cache_dir)", kHint));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> Flags(const JitOptions& options) {
  std::vector<std::string> flags = {"-std=c++20", "-O3", "-fPIC", "-shared",
                                    "-ffp-contract=off", "-fno-semantic-interposition", "-fno-plt"};
#if AUTOBATCH_JIT_MARCH_NATIVE
  flags.push_back("-march=native");
#endif
  if (const char* env = std::getenv("AUTOBATCH_JIT_FLAGS"); env != nullptr) {
    for (absl::string_view flag : absl::StrSplit(env, absl::ByAnyChar(" \t\n"),
                                                 absl::SkipEmpty())) {
      flags.emplace_back(flag);
    }
  }
  flags.insert(flags.end(), options.extra_flags.begin(), options.extra_flags.end());
  return flags;
}

// What -march=native compiles for: the CPU's feature flags (x86 "flags",
// Arm "Features" in /proc/cpuinfo), part of the cache key, so that a cache
// shared between machines (a home directory over NFS, a restored CI cache)
// never hands one CPU a library built for another's instructions. Empty
// when the build is portable or the file says nothing.
std::string CpuSignature() {
#if AUTOBATCH_JIT_MARCH_NATIVE
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "flags") || absl::StartsWith(line, "Features")) return line;
  }
#endif
  return "";
}

// A name no other compile uses at the same time, even from another host or
// container sharing the cache directory (where process ids repeat).
std::string UniqueSuffix() {
  std::random_device random;
  const uint64_t bits = (uint64_t{random()} << 32) ^ random();
  return absl::StrFormat(".%d.%016x.tmp", getpid(), bits);
}

// The generated blocks call these; in the library they forward to the host
// (codegen/jit.h). Defined in the library, they need no symbol from the
// executable.
std::string Prelude() {
  return R"(
// JIT glue (codegen/jit.cc): calls into the host through its table.
#include "codegen/jit.h"

namespace {
const autobatch::JitHost* jit_host = nullptr;
}  // namespace

namespace autobatch {
void RandomLanes(const uint64_t* key, const uint64_t* counter, int64_t lanes, int64_t elements,
                 bool normal, double* out) {
  jit_host->random_lanes(key, counter, lanes, elements, normal, out);
}
namespace element {
void EvalTranscendental(Transcendental fn, const double* x, double* y, int64_t n) {
  jit_host->transcendental_f64(fn, x, y, n);
}
void EvalTranscendental(Transcendental fn, const float* x, float* y, int64_t n) {
  jit_host->transcendental_f32(fn, x, y, n);
}
void EvalLogSumExp(const double* x, double* y, int64_t lanes, int64_t n) {
  jit_host->log_sum_exp_f64(x, y, lanes, n);
}
void EvalLogSumExp(const float* x, float* y, int64_t lanes, int64_t n) {
  jit_host->log_sum_exp_f32(x, y, lanes, n);
}
double Pow(double a, double b) { return jit_host->pow(a, b); }
}  // namespace element
}  // namespace autobatch

)";
}

std::string Epilogue() {
  return absl::StrCat("extern \"C\" const autobatch::FusedProgram* ", kEntry,
                      "(const autobatch::JitHost* host) {\n  jit_host = host;\n"
                      "  return &JitBlocks();\n}\n");
}

const JitHost& Host() {
  static const JitHost host = {
      &RandomLanes,
      static_cast<void (*)(element::Transcendental, const double*, double*, int64_t)>(
          &element::EvalTranscendental),
      static_cast<void (*)(element::Transcendental, const float*, float*, int64_t)>(
          &element::EvalTranscendental),
      static_cast<void (*)(const double*, double*, int64_t, int64_t)>(&element::EvalLogSumExp),
      static_cast<void (*)(const float*, float*, int64_t, int64_t)>(&element::EvalLogSumExp),
      &element::Pow,
  };
  return host;
}

absl::Status Unavailable(std::string what) {
  return absl::UnavailableError(absl::StrCat("JIT: ", what, kHint));
}

absl::StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Unavailable(absl::StrCat("cannot read ", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Why a write into the cache directory failed, in words that name the
// directory and what to do, for the errno of the failed call.
absl::Status CacheWriteError(const fs::path& dir, const fs::path& file, int error) {
  if (error == ENOSPC || error == EDQUOT || error == EFBIG) {
    return Unavailable(absl::StrCat(
        "the cache directory ", dir.string(), " is full: cannot write ", file.string(), " (",
        std::strerror(error), "); free space there (or raise the file size limit, ulimit -f), "
        "or set AUTOBATCH_CACHE_DIR to a directory on another disk"));
  }
  return Unavailable(absl::StrCat("cannot write ", file.string(), " in the cache directory ",
                                  dir.string(), " (", std::strerror(error),
                                  "): make it writable, or set AUTOBATCH_CACHE_DIR to another "
                                  "directory"));
}

// Writes a new file, every call checked; on failure the file is removed.
absl::Status WriteFile(const fs::path& dir, const fs::path& path, std::string_view text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return CacheWriteError(dir, path, errno);
  int error = 0;
  for (size_t done = 0; done < text.size() && error == 0;) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno != EINTR) error = errno;
    if (n > 0) done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    unlink(path.c_str());
    return CacheWriteError(dir, path, error);
  }
  return absl::OkStatus();
}

// What a compiler's output says when the disk, not the code, made it fail.
const char* DiskErrorIn(std::string_view output) {
  for (const char* reason : {"No space left on device", "Disk quota exceeded", "File too large"}) {
    if (output.find(reason) != std::string_view::npos) return reason;
  }
  return nullptr;
}

// Runs argv (no shell) with stdout and stderr to `log`; its exit status, or
// an error if it could not be started or was killed.
absl::Status RunCompiler(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  const std::string command = absl::StrJoin(argv, " ");
  if (spawned != 0) {
    return Unavailable(absl::StrCat("cannot run the C++ compiler '", argv[0], "' (",
                                    std::strerror(spawned),
                                    "): install it, or name another with "
                                    "JitOptions::compiler or AUTOBATCH_JIT_CXX"));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Unavailable(absl::StrCat("lost the compiler: ", command));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  std::string output = ReadFile(log).value_or("");
  if (const char* reason = DiskErrorIn(output); reason != nullptr) {
    return absl::ResourceExhaustedError(reason);  // JitFusedBlocks names the directory
  }
  if (output.size() > 2000) output = absl::StrCat(output.substr(0, 2000), "\n[...]");
  return Unavailable(absl::StrCat(
      "the C++ compiler failed (",
      WIFEXITED(status) ? absl::StrCat("exit status ", WEXITSTATUS(status))
                        : absl::StrCat("signal ", WTERMSIG(status)),
      "): ", command, "\n", output, "\n(the whole output is in ", log.string(), ")"));
}

using EntryFn = const FusedProgram* (*)(const JitHost*);

// dlopen()s `library` and returns its blocks, or the loader's error.
absl::StatusOr<const FusedProgram*> Load(const fs::path& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return Unavailable(absl::StrCat("cannot load ", library.string(), ": ",
                                    error != nullptr ? error : "unknown error"));
  }
  // Never dlclose()d: the program's segments point into the library.
  auto entry = reinterpret_cast<EntryFn>(dlsym(handle, kEntry));
  if (entry == nullptr) {
    return Unavailable(absl::StrCat(library.string(), " has no ", kEntry,
                                    ": not a JIT library of this version"));
  }
  return entry(&Host());
}

// The record that vouches for a cached library: its size and the FNV-1a
// hash of its bytes. It is written (atomically) after the library is renamed
// into place, under the program's lock, so a library that a crash, a full
// disk or a copy cut short (a valid ELF header, then nothing: dlopen maps
// past the end and the first call dies of SIGBUS) never matches it.
std::string Checksum(std::string_view bytes) {
  return absl::StrFormat("%d %016x\n", bytes.size(), Fnv1a64(bytes));
}

bool Verified(const fs::path& library, const fs::path& sum) {
  absl::StatusOr<std::string> bytes = ReadFile(library);
  absl::StatusOr<std::string> expected = ReadFile(sum);
  return bytes.ok() && expected.ok() && Checksum(*bytes) == *expected;
}

// An exclusive flock(2) on a program's lock file in the cache directory, held
// from the check of the cache to the rename of a new library and its
// checksum: processes that compile one program at once wait for the first,
// then load its library (the in-process mutex alone cannot see them).
class CacheLock {
 public:
  static absl::StatusOr<CacheLock> Acquire(const fs::path& dir, const fs::path& path) {
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return CacheWriteError(dir, path, errno);
    while (flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int error = errno;
        close(fd);
        return Unavailable(absl::StrCat("cannot lock ", path.string(), " (",
                                        std::strerror(error), ")"));
      }
    }
    return CacheLock(fd);
  }
  CacheLock(CacheLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  CacheLock& operator=(CacheLock&&) = delete;
  ~CacheLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock; the file stays (see OutputDirectoryLock)
  }

 private:
  explicit CacheLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// The hash of the embedded header copies (codegen/jit_headers.h): part of
// the cache key, and the name of their directory in the cache.
uint64_t HeadersKey() {
  static const uint64_t key = [] {
    uint64_t hash = Fnv1a64("autobatch jit headers\n");
    for (const JitHeader& header : JitHeaders()) {
      hash = Fnv1a64(header.text, Fnv1a64(header.path, hash));
    }
    return hash;
  }();
  return key;
}

bool HeadersMatch(const fs::path& include) {
  for (const JitHeader& header : JitHeaders()) {
    absl::StatusOr<std::string> text = ReadFile(include / header.path);
    if (!text.ok() || *text != header.text) return false;
  }
  return true;
}

// The directory the compiler reads the embedded headers from:
// <cache>/include_<HeadersKey()>, written whole under a temporary name and
// renamed into place, so that processes sharing the cache see all of it or
// none of it. A copy that does not match (edited by hand) is replaced.
absl::StatusOr<fs::path> HeaderDirectory(const fs::path& dir) {
  const std::string name = absl::StrFormat("include_%016x", HeadersKey());
  const fs::path include = dir / name;
  if (HeadersMatch(include)) return include;
  const fs::path tmp = dir / absl::StrCat(name, UniqueSuffix());
  std::error_code error;
  for (const JitHeader& header : JitHeaders()) {
    const fs::path file = tmp / header.path;
    fs::create_directories(file.parent_path(), error);
    absl::Status written =
        error ? CacheWriteError(dir, file, error.value()) : WriteFile(dir, file, header.text);
    if (!written.ok()) {
      fs::remove_all(tmp, error);
      return written;
    }
  }
  if (fs::exists(include, error) && !HeadersMatch(include)) fs::remove_all(include, error);
  fs::rename(tmp, include, error);
  if (error) {  // another process put its copy there first
    fs::remove_all(tmp, error);
    if (!HeadersMatch(include)) {
      return Unavailable(absl::StrCat("cannot write the headers the generated code includes to ",
                                      include.string(), " in the cache directory ",
                                      dir.string()));
    }
  }
  return include;
}

struct Loaded {
  std::mutex mutex;
  // By program fingerprint, cache directory, compiler and flags.
  std::map<std::string, const FusedProgram*> by_program;
};

Loaded& LoadedLibraries() {
  static Loaded* loaded = new Loaded;  // never destroyed: libraries stay loaded
  return *loaded;
}

// What to compile: a program's fused blocks, or the whole program.
enum class JitKind { kFusedBlocks, kWholeProgram };

absl::StatusOr<const FusedProgram*> Jit(const Program& program, JitKind kind,
                                        const JitOptions& options) {
  const bool whole = kind == JitKind::kWholeProgram;
  if (program.stage != Stage::kLowered) {
    return absl::InvalidArgumentError(absl::StrCat(
        whole ? "JIT compiled program" : "JIT fused blocks",
        ": the program is not lowered; pass the stack VM's program (LowerProgram)"));
  }
  const std::string compiler =
      options.compiler.empty() ? EnvOr("AUTOBATCH_JIT_CXX", AUTOBATCH_JIT_CXX) : options.compiler;
  const std::vector<std::string> flags = Flags(options);
  const fs::path dir = CacheDir(options);
  // A program loaded before is found by its fingerprint, without generating
  // its source again (the VM calls this on every run).
  const std::string loaded_key =
      absl::StrCat(whole ? "whole " : "fused ",
                   absl::StrFormat("%016x", ProgramFingerprint(program)), "\n", dir.string(),
                   "\n", compiler, "\n", absl::StrJoin(flags, "\n"));
  Loaded& loaded = LoadedLibraries();
  std::lock_guard<std::mutex> lock(loaded.mutex);
  if (auto it = loaded.by_program.find(loaded_key); it != loaded.by_program.end()) {
    return it->second;
  }

  AB_ASSIGN_OR_RETURN(std::string blocks, whole ? EmitCompiledProgram(program, "JitBlocks")
                                                : EmitFusedBlocks(program, "JitBlocks"));
  const std::string source = absl::StrCat(Prelude(), blocks, "\n", Epilogue());

  uint64_t key = Fnv1a64(absl::StrCat("autobatch jit ", kJitFormat, "\n", compiler, "\n",
                                    absl::StrJoin(flags, "\n"), "\n", CpuSignature(), "\n"));
  key = Fnv1a64(source, Fnv1a64(absl::StrFormat("%016x", HeadersKey()), key));

  const std::string stem =
      absl::StrCat(whole ? "program_" : "fused_", absl::StrFormat("%016x", key));
  const fs::path library = dir / absl::StrCat(stem, ".so");
  const fs::path sum = dir / absl::StrCat(stem, ".sum");
  AB_RETURN_IF_ERROR(RefuseSymlinkedPath(dir.string()));
  std::error_code error;
  if (fs::create_directories(dir, error) && !error) {
    fs::permissions(dir, fs::perms::owner_all, error);  // new: private to this user
  }
  if (error) {
    return Unavailable(absl::StrCat("cannot create the cache directory ", dir.string(), " (",
                                    error.message(),
                                    "): set JitOptions::cache_dir or AUTOBATCH_CACHE_DIR"));
  }
  AB_RETURN_IF_ERROR(RefuseSymlinkedPath(dir.string()));
  AB_RETURN_IF_ERROR(CheckPrivate(dir));
  AB_ASSIGN_OR_RETURN(CacheLock cache_lock,
                      CacheLock::Acquire(dir, dir / absl::StrCat(stem, ".lock")));
  absl::StatusOr<const FusedProgram*> fused = absl::NotFoundError("");
  if (fs::exists(library, error)) {
    AB_RETURN_IF_ERROR(CheckPrivate(library));
    if (Verified(library, sum)) {
      fused = Load(library);
    } else {
      // Never dlopen()ed: a truncated library would crash the process.
      std::cerr << "autobatch: JIT cache: " << library.string()
                << " does not match its checksum (" << sum.string()
                << "; cut short or changed), so it is compiled again\n";
      fs::remove(library, error);
    }
  }
  if (!fused.ok()) {  // not cached, or a cached file that does not load
    const std::string unique = UniqueSuffix();
    const fs::path src = dir / absl::StrCat(stem, unique, ".cc");
    const fs::path tmp = dir / absl::StrCat(stem, unique, ".so");
    const fs::path log = dir / absl::StrCat(stem, unique, ".log");
    auto remove_temporaries = [&] {
      for (const fs::path& file : {src, tmp, log}) fs::remove(file, error);
    };
    AB_ASSIGN_OR_RETURN(const fs::path include, HeaderDirectory(dir));
    AB_RETURN_IF_ERROR(WriteFile(dir, src, source));
    std::vector<std::string> argv = {compiler};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(absl::StrCat("-I", include.string()));
    argv.insert(argv.end(), {"-o", tmp.string(), src.string()});
    const absl::Status compiled = RunCompiler(argv, log);
    if (absl::IsResourceExhausted(compiled)) {
      remove_temporaries();  // they take space where there is none
      return Unavailable(absl::StrCat(
          "the cache directory ", dir.string(), " is full, or a file size limit was reached: the "
          "C++ compiler failed with '", compiled.message(), "' (", absl::StrJoin(argv, " "),
          "); free space there (or in $TMPDIR, where the compiler writes its own temporary "
          "files, or raise ulimit -f), or set AUTOBATCH_CACHE_DIR to a directory on another disk"));
    }
    if (!compiled.ok()) {
      fs::remove(tmp, error);
      // The source and the log stay for the user to look at.
      return absl::Status(compiled.code(), absl::StrCat(compiled.message(), "\n(the source is ",
                                                        src.string(), ")"));
    }
    fs::remove(src, error);
    fs::remove(log, error);
    absl::StatusOr<std::string> bytes = ReadFile(tmp);
    if (!bytes.ok()) {
      remove_temporaries();
      return bytes.status();
    }
    fs::permissions(tmp, fs::perms::owner_all, error);  // whatever the umask
    fs::rename(tmp, library, error);
    if (error) {
      const std::string reason = error.message();  // before the removals reset `error`
      remove_temporaries();
      return Unavailable(absl::StrCat("cannot move ", tmp.string(), " to ", library.string(),
                                      " in the cache directory ", dir.string(), " (", reason,
                                      ")"));
    }
    if (absl::Status written = WriteFileAtomically(sum.string(), Checksum(*bytes),
                                                   "the JIT cache's checksum");
        !written.ok()) {
      fs::remove(library, error);  // unvouched for: it would be compiled again anyway
      return Unavailable(absl::StrCat("in the cache directory ", dir.string(), ": ",
                                      written.message()));
    }
    fused = Load(library);
  }
  if (!fused.ok()) return fused.status();
  AB_RETURN_IF_ERROR(CheckFusedProgram(**fused, program));
  loaded.by_program[loaded_key] = *fused;
  return *fused;
}

}  // namespace

absl::StatusOr<const FusedProgram*> JitFusedBlocks(const Program& program,
                                                   const JitOptions& options) {
  return Jit(program, JitKind::kFusedBlocks, options);
}

absl::StatusOr<const FusedProgram*> JitCompiledProgram(const Program& program,
                                                       const JitOptions& options) {
  return Jit(program, JitKind::kWholeProgram, options);
}

absl::StatusOr<const FusedProgram*> JitForCall(const Program& program,
                                               const CallOptions& options) {
  if (options.fused_blocks != nullptr) return nullptr;
  if (options.jit_compiled_program) return JitCompiledProgram(program);
  if (options.jit_fused_blocks) return JitFusedBlocks(program);
  return nullptr;
}

}  // namespace autobatch
