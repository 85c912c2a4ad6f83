# The Jolt Physics engine (src/native/jolt/), in the default build.
#
# JOLTGYM_WITH_JOLT:
#   AUTO (default) - build with Jolt: its source is JOLT_SOURCE_DIR (a CMake or
#                    environment variable: a user's own Jolt checkout), else the
#                    copy tools/fetch_jolt.py cached (~/.cache/joltgym_marl), else
#                    it is fetched now, pinned, by package name from the index
#                    pip is configured with (tools/fetch_jolt.py: sha256 checked).
#                    Where that is impossible (no network, no such file on the
#                    index), one warning says why and how to add Jolt later,
#                    and the build goes on without it.
#   ON             - the same, but a build without Jolt is an error.
#   OFF            - never (no network access at all).
# Without Jolt the build succeeds and engine="jolt" raises an error saying how
# to get it; `python -m joltgym_marl list` says which engines the build has.
#
# Jolt is built once per (source, compiler, options) into a cache folder
# outside the build tree (JOLTGYM_JOLT_BUILD_CACHE, default
# ~/.cache/joltgym_marl/jolt-build-<key>), at configure time, and reused by
# every build folder that asks for the same key: the wheel, the in-place
# build and the sanitizer build compile it once between them. Lean and
# portable: static, position-independent, SSE4.2 baseline (no AVX/AVX2/FMA:
# wheels run on any x86-64), no profiler, no debug renderer, no object
# stream, no LTO, no debug symbols.

set(JOLTGYM_WITH_JOLT "AUTO" CACHE STRING "Build the Jolt Physics engine: AUTO, ON or OFF")
set_property(CACHE JOLTGYM_WITH_JOLT PROPERTY STRINGS AUTO ON OFF)
option(JOLTGYM_JOLT_ASSERTS "Build Jolt with its own asserts (a debug test build)" OFF)
set(JOLT_SOURCE_DIR "$ENV{JOLT_SOURCE_DIR}" CACHE PATH "A Jolt Physics source folder (Build/, Jolt/)")
set(JOLTGYM_JOLT_CACHE "" CACHE PATH "Where the fetched Jolt source is cached (default ~/.cache/joltgym_marl)")
set(JOLTGYM_JOLT_BUILD_CACHE "" CACHE PATH "Where Jolt is built once and reused (default: in the cache)")

set(JOLTGYM_HAVE_JOLT OFF)
set(JOLTGYM_JOLT_STATUS "")

function(joltgym_find_jolt_source out_dir)
  set(${out_dir} "" PARENT_SCOPE)
  set(fetch_args "")
  if(JOLTGYM_JOLT_CACHE)
    list(APPEND fetch_args --cache "${JOLTGYM_JOLT_CACHE}")
  endif()
  if(JOLT_SOURCE_DIR)
    if(EXISTS "${JOLT_SOURCE_DIR}/Build/CMakeLists.txt" AND EXISTS "${JOLT_SOURCE_DIR}/Jolt/Jolt.h")
      set(${out_dir} "${JOLT_SOURCE_DIR}" PARENT_SCOPE)
    else()
      set(JOLTGYM_JOLT_STATUS "JOLT_SOURCE_DIR=${JOLT_SOURCE_DIR} has no Build/CMakeLists.txt and Jolt/Jolt.h"
          PARENT_SCOPE)
    endif()
    return()
  endif()
  if(JOLTGYM_JOLT_CACHE)
    set(cache "${JOLTGYM_JOLT_CACHE}")
  elseif(DEFINED ENV{JOLTGYM_JOLT_CACHE})
    set(cache "$ENV{JOLTGYM_JOLT_CACHE}")
  elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
    set(cache "$ENV{XDG_CACHE_HOME}/joltgym_marl")
  else()
    set(cache "$ENV{HOME}/.cache/joltgym_marl")
  endif()
  set(cached "${cache}/JoltPhysics-5.5.0")
  if(EXISTS "${cached}/JOLT_VERSION" AND EXISTS "${cached}/Build/CMakeLists.txt")
    set(${out_dir} "${cached}" PARENT_SCOPE)
    return()
  endif()
  find_package(Python 3.8 COMPONENTS Interpreter)
  if(NOT Python_EXECUTABLE)
    set(JOLTGYM_JOLT_STATUS "no Python interpreter to run tools/fetch_jolt.py" PARENT_SCOPE)
    return()
  endif()
  message(STATUS "Jolt: fetching the pinned source (tools/fetch_jolt.py)")
  execute_process(
    COMMAND "${Python_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/tools/fetch_jolt.py" --cache "${cache}"
    OUTPUT_VARIABLE fetched OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_VARIABLE fetch_error
    RESULT_VARIABLE fetch_rc)
  if(fetch_rc EQUAL 0 AND EXISTS "${fetched}/Build/CMakeLists.txt")
    set(${out_dir} "${fetched}" PARENT_SCOPE)
  else()
    string(STRIP "${fetch_error}" fetch_error)
    set(JOLTGYM_JOLT_STATUS "fetching its pinned source failed (${fetch_error})" PARENT_SCOPE)
  endif()
endfunction()

if(NOT JOLTGYM_WITH_JOLT STREQUAL "OFF")
  joltgym_find_jolt_source(JOLTGYM_JOLT_SOURCE)
  if(JOLTGYM_JOLT_SOURCE)
    # Everything that changes the library's code or ABI is in the key.
    set(jolt_options
      -DCMAKE_BUILD_TYPE=Release
      -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
      -DCMAKE_POSITION_INDEPENDENT_CODE=ON
      -DBUILD_SHARED_LIBS=OFF
      -DUSE_ASSERTS=${JOLTGYM_JOLT_ASSERTS}
      -DDOUBLE_PRECISION=OFF
      -DGENERATE_DEBUG_SYMBOLS=OFF
      -DINTERPROCEDURAL_OPTIMIZATION=OFF
      -DFLOATING_POINT_EXCEPTIONS_ENABLED=OFF
      -DCPP_RTTI_ENABLED=ON
      -DOBJECT_LAYER_BITS=16
      -DUSE_SSE4_1=ON -DUSE_SSE4_2=ON -DUSE_AVX=OFF -DUSE_AVX2=OFF -DUSE_AVX512=OFF
      -DUSE_LZCNT=OFF -DUSE_TZCNT=OFF -DUSE_F16C=OFF -DUSE_FMADD=OFF
      -DDEBUG_RENDERER_IN_DEBUG_AND_RELEASE=OFF -DDEBUG_RENDERER_IN_DISTRIBUTION=OFF
      -DPROFILER_IN_DEBUG_AND_RELEASE=OFF -DPROFILER_IN_DISTRIBUTION=OFF
      -DENABLE_OBJECT_STREAM=OFF
      -DENABLE_ALL_WARNINGS=ON
      -DENABLE_INSTALL=ON
      -DTARGET_UNIT_TESTS=OFF -DTARGET_HELLO_WORLD=OFF -DTARGET_PERFORMANCE_TEST=OFF
      -DTARGET_SAMPLES=OFF -DTARGET_VIEWER=OFF)
    string(SHA256 jolt_key "${JOLTGYM_JOLT_SOURCE};${CMAKE_CXX_COMPILER_ID};${CMAKE_CXX_COMPILER_VERSION};${jolt_options}")
    string(SUBSTRING "${jolt_key}" 0 12 jolt_key)
    if(JOLTGYM_JOLT_BUILD_CACHE)
      set(jolt_build_root "${JOLTGYM_JOLT_BUILD_CACHE}")
    else()
      get_filename_component(jolt_build_root "${JOLTGYM_JOLT_SOURCE}/.." ABSOLUTE)
    endif()
    set(jolt_build "${jolt_build_root}/jolt-build-${jolt_key}")
    set(jolt_prefix "${jolt_build}/install")
    set(jolt_library "${jolt_prefix}/lib/libJolt.a")
    file(MAKE_DIRECTORY "${jolt_build}")
    # One configure at a time builds it; the others wait, then reuse it.
    file(LOCK "${jolt_build}/.lock" TIMEOUT 1800 RESULT_VARIABLE lock_rc)
    if(NOT EXISTS "${jolt_prefix}/.complete")
      message(STATUS "Jolt: building ${JOLTGYM_JOLT_SOURCE} once into ${jolt_build} (about 2 CPU-minutes)")
      string(TIMESTAMP jolt_t0 "%s")
      cmake_host_system_information(RESULT jolt_cpus QUERY NUMBER_OF_LOGICAL_CORES)
      execute_process(
        COMMAND "${CMAKE_COMMAND}" -S "${JOLTGYM_JOLT_SOURCE}/Build" -B "${jolt_build}/work"
                -DCMAKE_INSTALL_PREFIX=${jolt_prefix} ${jolt_options}
        OUTPUT_VARIABLE jolt_out ERROR_VARIABLE jolt_out RESULT_VARIABLE jolt_rc)
      if(jolt_rc EQUAL 0)
        execute_process(
          COMMAND "${CMAKE_COMMAND}" --build "${jolt_build}/work" --target install -j ${jolt_cpus}
          OUTPUT_VARIABLE jolt_out ERROR_VARIABLE jolt_out RESULT_VARIABLE jolt_rc)
      endif()
      string(TIMESTAMP jolt_t1 "%s")
      math(EXPR jolt_seconds "${jolt_t1} - ${jolt_t0}")
      if(jolt_rc EQUAL 0 AND EXISTS "${jolt_library}")
        file(WRITE "${jolt_prefix}/.complete" "built in ${jolt_seconds} s\n")
        file(REMOVE_RECURSE "${jolt_build}/work")  # 90 MB of objects; the install is 4 MB
        message(STATUS "Jolt: built in ${jolt_seconds} s")
      else()
        string(LENGTH "${jolt_out}" jolt_out_len)
        if(jolt_out_len GREATER 3000)
          math(EXPR jolt_tail "${jolt_out_len} - 3000")
          string(SUBSTRING "${jolt_out}" ${jolt_tail} 3000 jolt_out)
        endif()
        set(JOLTGYM_JOLT_STATUS "building Jolt failed:\n${jolt_out}")
      endif()
    endif()
    file(LOCK "${jolt_build}/.lock" RELEASE)
    if(EXISTS "${jolt_prefix}/.complete")
      set(JOLTGYM_HAVE_JOLT ON)
      include("${jolt_prefix}/lib/cmake/Jolt/JoltConfig.cmake")
      message(STATUS "Jolt: ${jolt_library}")
    endif()
  endif()
  if(NOT JOLTGYM_HAVE_JOLT)
    # Required (ON): an error; the default (AUTO): one warning, and the build goes on.
    if(JOLTGYM_WITH_JOLT STREQUAL "ON")
      set(jolt_level FATAL_ERROR)
    else()
      set(jolt_level WARNING)
    endif()
    message(${jolt_level} "Jolt Physics: building WITHOUT it (engine=\"jolt\" will raise): ${JOLTGYM_JOLT_STATUS}. "
            "To add it: python tools/fetch_jolt.py (or set JOLT_SOURCE_DIR), then pip install . again.")
  endif()
endif()
