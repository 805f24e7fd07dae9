//===- TestCache.h - A kernel cache directory for the API tests -*- C++ -*-===//

#ifndef HUMMING_UNITTESTS_API_TESTCACHE_H
#define HUMMING_UNITTESTS_API_TESTCACHE_H

#include <cstdlib>
#include <string>
#include <unistd.h>

namespace humming::test {

/// One kernel cache directory for the test process (the layers' JIT state is
/// process-wide): set before the first transform, removed at exit, so tests
/// never write to the user's ~/.cache/humming.
inline const std::string &useTestCache() {
  struct CacheDir {
    std::string path;
    CacheDir() {
      char buf[] = "/tmp/humming-api-test-XXXXXX";
      path = ::mkdtemp(buf);
      ::setenv("HUMMING_CACHE_DIR", path.c_str(), 1);
    }
    ~CacheDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  };
  static CacheDir dir;
  return dir.path;
}

} // namespace humming::test

#endif // HUMMING_UNITTESTS_API_TESTCACHE_H
