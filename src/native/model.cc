#include "model.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "errors.h"
#include "mujoco_errors.h"

namespace joltgym {

namespace {

// "a\0b" -> "a\\0b": a path as a user would type it in a message.
std::string Printable(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\0') {
      out += "\\0";
    } else {
      out += c;
    }
  }
  return out;
}

std::string ClipPath(const std::string& path) { return ClipMiddle(Printable(path)); }

const char* FileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

std::string Folder(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
}

std::string Join(const std::string& folder, const std::string& name) {
  if (name.empty() || name[0] == '/') return name;
  return folder + "/" + name;
}

struct Attribute {
  std::string element;  // the tag it belongs to: "include", "mesh", ...
  std::string name;
  std::string value;
};

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':' ||
         c == '.';
}

// Every attribute of every start tag (comments skipped): a lenient scan that
// finds file references; MuJoCo's parser judges the XML itself.
std::vector<Attribute> ScanAttributes(const std::string& xml) {
  std::vector<Attribute> out;
  std::size_t i = 0;
  const std::size_t n = xml.size();
  while ((i = xml.find('<', i)) != std::string::npos) {
    if (xml.compare(i, 4, "<!--") == 0) {
      const std::size_t end = xml.find("-->", i + 4);
      if (end == std::string::npos) break;
      i = end + 3;
      continue;
    }
    ++i;
    std::size_t start = i;
    while (i < n && NameChar(xml[i])) ++i;
    const std::string element = xml.substr(start, i - start);
    // Attributes until the end of the tag.
    while (i < n && xml[i] != '>') {
      while (i < n && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      start = i;
      while (i < n && NameChar(xml[i])) ++i;
      if (i == start) {
        ++i;
        continue;
      }
      const std::string name = xml.substr(start, i - start);
      while (i < n && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= n || xml[i] != '=') continue;
      ++i;
      while (i < n && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= n || (xml[i] != '"' && xml[i] != '\'')) continue;
      const char quote = xml[i++];
      const std::size_t end = xml.find(quote, i);
      if (end == std::string::npos) return out;
      out.push_back({element, name, xml.substr(i, end - i)});
      i = end + 1;
    }
  }
  return out;
}

// Throws if any file `path` (an MJCF) refers to, directly or through its
// includes, exists and is neither a regular file nor a directory.
void CheckReferencedFiles(const std::string& root, const std::string& path,
                          std::set<std::string>& visited, int depth) {
  if (depth > 32 || !visited.insert(path).second) return;
  std::ifstream in(path, std::ios::binary);
  if (!in) return;  // MuJoCo reports unreadable files itself
  std::ostringstream text;
  text << in.rdbuf();
  const std::vector<Attribute> attributes = ScanAttributes(text.str());
  // Asset files may be looked up under the compiler's folders.
  std::vector<std::string> folders = {Folder(path), Folder(root)};
  for (const Attribute& a : attributes) {
    if (a.name == "meshdir" || a.name == "texturedir" || a.name == "assetdir") {
      folders.push_back(Join(Folder(root), a.value));
      folders.push_back(Join(Folder(path), a.value));
    }
  }
  for (const Attribute& a : attributes) {
    if (a.name.compare(0, 4, "file") != 0 || a.value.empty()) continue;
    for (const std::string& folder : folders) {
      const std::string candidate = Join(folder, a.value);
      struct stat info{};
      if (stat(candidate.c_str(), &info) != 0) continue;
      if (!S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
        throw BadValue("MJCF file '" + ClipPath(root) + "' refers to '" + ClipPath(candidate) + "' (<" +
                       a.element + " " + a.name + "=\"" + ClipPath(a.value) + "\">), which is " +
                       FileKind(info.st_mode) +
                       "; expected a regular file");
      }
      if (a.element == "include" && S_ISREG(info.st_mode)) {
        CheckReferencedFiles(root, candidate, visited, depth + 1);
      }
    }
  }
}

}  // namespace

void RequireModelFile(const std::string& path) {
  if (path.find('\0') != std::string::npos) {
    throw BadValue("MJCF file path '" + ClipPath(path) +
                   "' contains a NUL byte; expected a path without NUL bytes");
  }
  struct stat info{};
  if (!path.empty() && stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    throw BadValue("MJCF file '" + ClipPath(path) + "' is a directory (expected a readable model file)");
  }
  if (path.empty() || stat(path.c_str(), &info) != 0) {
    throw FileNotFound("MJCF file '" + ClipPath(path) + "' does not exist (expected a readable model file)");
  }
  if (!S_ISREG(info.st_mode)) {
    throw BadValue("MJCF file '" + ClipPath(path) + "' is " + FileKind(info.st_mode) +
                   "; expected a regular model file");
  }
  std::set<std::string> visited;
  CheckReferencedFiles(path, path, visited, 0);
}

void RequirePositiveTimestep(const mjModel* model, const std::string& path) {
  const double timestep = model->opt.timestep;
  if (!(timestep > 0.0) || !std::isfinite(timestep)) {
    std::ostringstream msg;
    msg << "MJCF file '" << path << "' has timestep " << timestep
        << " (<option timestep=...>); expected a positive, finite timestep";
    throw BadValue(msg.str());
  }
}

ModelPtr LoadModel(const std::string& path, bool simulated) {
  RequireModelFile(path);
  char error[1024] = "";
  mjModel* model = nullptr;
  MujocoReport report;
  // Parsed, then compiled on this thread (mj_loadXML's two steps, with the
  // compiler's `usethread` off): the compiler's own worker threads throw
  // std::system_error out of libmujoco when the system refuses a thread, and
  // an exception from its bundled C++ runtime cannot be caught here: the
  // process would abort.
  const bool ok = GuardMujoco(
      [&] {
        mjSpec* spec = mj_parseXML(path.c_str(), nullptr, error, sizeof(error));
        if (spec == nullptr) return;
        spec->compiler.usethread = 0;
        model = mj_compile(spec, nullptr);
        if (model == nullptr) std::snprintf(error, sizeof(error), "%s", mjs_getError(spec));
        mj_deleteSpec(spec);
      },
      &report);
  if (!ok) {
    if (model != nullptr) mj_deleteModel(model);
    throw MujocoError("MuJoCo failed loading MJCF file '" + ClipPath(path) + "': " + ClipMiddle(report.error_message, 2000),
                      report.error == MujocoReport::Error::kOutOfMemory);
  }
  if (model == nullptr) {
    const std::string message = "MJCF file '" + path + "' could not be compiled: " + error;
    // The system's memory, not the file's: MemoryError.
    if (std::strstr(error, "ould not allocate") != nullptr) throw MujocoError(message, true);
    throw BadValue(message);
  }
  ModelPtr owned(model, [](const mjModel* m) { mj_deleteModel(const_cast<mjModel*>(m)); });
  if (simulated) RequirePositiveTimestep(model, path);
  // MuJoCo 4 warns that `settotalmass` is deprecated. The bundled HalfCheetah
  // keeps it on purpose (it is what makes its masses bit-identical to
  // Gymnasium's HalfCheetah-v5), so that one notice is dropped; the others
  // are raised as Python warnings by the binding.
  MujocoReport& pending = ThreadConstructionReport();
  for (std::string& warning : report.warnings) {
    if (warning.find("settotalmass") != std::string::npos) continue;
    MujocoReport one;
    one.warnings.push_back(std::move(warning));
    pending.TakeWarnings(one);
  }
  pending.dropped_warnings += report.dropped_warnings;
  return owned;
}

int RequireId(const mjModel* model, mjtObj type, const std::string& name) {
  const int id = mj_name2id(model, type, name.c_str());
  if (id < 0) {
    throw BadValue("model has no " + std::string(mju_type2Str(type)) + " named '" + name + "'");
  }
  return id;
}

}  // namespace joltgym
