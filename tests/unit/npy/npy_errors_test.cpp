// Malformed .npy files: every error class names the file and the place, and a fuzz loop over
// truncations, byte flips and header-token mutations never gets anything but InputError.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <unistd.h>

#include "models/functional/npy.h"
#include "tests/unit/npy/npy_fixtures.h"
#include "tests/unit/npy/npy_test_util.h"

using namespace npusim::functional;
using namespace npy_fixtures;
using npy_test::build;
using npy_test::bytes_of;
using npy_test::error_of;
using npy_test::from_hex;

namespace {
const std::vector<uint8_t> kSix = bytes_of({1, 2, 3, 4, 5, 6});  // 24 bytes of '<f4'

std::vector<uint8_t> with_header(const std::string& h, const std::vector<uint8_t>& p = kSix) {
  return build(h, p);
}
std::vector<uint8_t> with_dict(const std::string& descr, const std::string& shape,
                               const std::vector<uint8_t>& p = kSix) {
  return build("{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + "}", p);
}

// Expects an InputError on file t.npy whose place starts with `where` and whose message has
// `what` in it.
void expect_error(const std::vector<uint8_t>& b, const std::string& where,
                  const std::string& what) {
  const auto e = error_of(b);
  ASSERT_TRUE(e.has_value()) << "parsed without error; expected " << what;
  EXPECT_EQ(e->file(), "t.npy");
  EXPECT_EQ(e->where().substr(0, where.size()), where) << e->what();
  EXPECT_NE(e->detail().find(what), std::string::npos) << e->what();
}
}  // namespace

TEST(NpyErrors, EveryTruncationIsReportedByTheRightCheck) {
  // kF4C: 10-byte preamble, 118-byte header, 24-byte payload = 152 bytes.
  const auto full = from_hex(kF4C);
  ASSERT_EQ(full.size(), 152u);
  for (size_t n = 0; n < full.size(); ++n) {
    SCOPED_TRACE(n);
    const std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    if (n < 10)
      expect_error(cut, "byte " + std::to_string(n), "truncated");
    else if (n < 128)
      expect_error(cut, "byte 8", "runs past the end of the file");
    else
      expect_error(cut, "data (byte 128)", "(truncated file)");
  }
}

TEST(NpyErrors, PayloadLongerOrShorterThanTheShape) {
  // Shape (2, 3) of '<f4' needs 24 bytes.
  auto longer = kSix;
  longer.push_back(0);
  expect_error(with_dict("<f4", "(2, 3)", longer), "data", "payload has 25 bytes");
  expect_error(with_dict("<f4", "(2, 3)", longer), "data", "(trailing bytes)");
  expect_error(with_dict("<f4", "(2, 4)"), "data", "needs 32 (truncated file)");
  expect_error(with_dict("<f4", "()"), "data", "needs 4 (trailing bytes)");
  expect_error(with_dict("<f4", "(0,)"), "data", "needs 0");
}

TEST(NpyErrors, BadMagicAndVersion) {
  expect_error({'G', 'I', 'F', '8', '9', 'a', 1, 0, 0, 0}, "byte 0", "not a .npy file");
  expect_error({0x93, 'N', 'U', 'M'}, "byte 4", "truncated");  // a magic prefix: truncated
  expect_error({0x93, 'X'}, "byte 0", "not a .npy file");
  auto v4 = from_hex(kF4C);
  v4[6] = 4;
  expect_error(v4, "byte 6", "unsupported format version 4.0");
  auto v11 = from_hex(kF4C);
  v11[7] = 1;
  expect_error(v11, "byte 6", "unsupported format version 1.1");
}

TEST(NpyErrors, HeaderLengthBeyondFile) {
  auto b = from_hex(kF4C);
  b[8] = 0xff;
  b[9] = 0xff;  // 65535 > 142 bytes left
  expect_error(b, "byte 8", "header length 65535 runs past");
  auto v2 = from_hex(kV2Header);
  v2[11] = 0xff;  // 4-byte length near 4 GiB must not wrap
  expect_error(v2, "byte 8", "runs past the end");
}

TEST(NpyErrors, UnparseableHeaderNamesTheByte) {
  // Header text starts at byte 10 of a version 1.0 file.
  expect_error(with_header(""), "header (byte 10)", "dict literal");
  expect_error(with_header("[1]"), "header (byte 10)", "dict literal");
  expect_error(with_header("{'descr': '<f4'"), "header (byte 25)", "expected ',' or '}'");
  expect_error(with_header("{'descr' '<f4'}"), "header (byte 19)", "expected ':'");
  expect_error(with_header("{'descr': <f4}"), "header (byte 20)", "quoted string");
  expect_error(with_header("{'descr': '<f4}"), "header", "unterminated string");
  expect_error(with_header("{'descr': '<f4' 'shape': ()}"), "header", "expected ',' or '}'");
  expect_error(with_header("{'fortran_order': 1}"), "header", "True or False");
  expect_error(with_header("{'shape': [2, 3]}"), "header", "not a list");
  expect_error(with_header("{'shape': (6)}"), "header", "write (n,)");
  expect_error(with_header("{'shape': (2,,3)}"), "header", "non-negative integer");
  expect_error(with_header("{'shape': (2 3)}"), "header", "expected ',' or ')'");
  expect_error(with_header("{'descr': '<f4'} x"), "header", "after the dict");
  expect_error(with_header("{'descr': '<f4', 'descr': '<f4'}"), "header (byte 27)", "duplicate");
  expect_error(with_header("{'order': 'C'}"), "header (byte 11)", "unexpected key 'order'");
  expect_error(with_header("{'descr': '<\\x66'}"), "header", "escapes");
  expect_error(with_header("{'descr': [('a', '<f4')]}"), "header", "structured");
}

TEST(NpyErrors, MissingKeys) {
  expect_error(with_header("{'fortran_order': False, 'shape': (6,)}"), "header",
               "missing key 'descr'");
  expect_error(with_header("{'descr': '<f4', 'shape': (6,)}"), "header",
               "missing key 'fortran_order'");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False}"), "header",
               "missing key 'shape'");
}

TEST(NpyErrors, UnknownDescr) {
  for (const char* d : {"<c8", "<f1", "<f16", "|b2", "O", "|O", "<U5", "<i3", "", "<", "<V4",
                        "|S2", "<M8[s]", "xf4", "<<f4"}) {
    SCOPED_TRACE(d);
    expect_error(with_dict(d, "(6,)"), "header: descr", "unsupported dtype");
  }
}

TEST(NpyErrors, BadDimensions) {
  expect_error(with_dict("<f4", "(2, -3)"), "header (byte ", "negative dimension");
  expect_error(with_dict("<f4", "(99999999999999999999,)"), "header", "dimension too large");
  // 2^32 * 2^32 elements overflow int64 although each dim fits.
  expect_error(with_dict("<f4", "(4294967296, 4294967296)"), "header: shape", "more elements");
  // 2^61 elements fit int64, but not as 2^63 bytes of '<f4'.
  expect_error(with_dict("<f4", "(2305843009213693952,)"), "header: shape", "more elements");
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1, ";
  expect_error(with_dict("<f4", many + ")"), "header", "more than 64 dimensions");
}

TEST(NpyErrors, ReadNpyNamesTheFileAndPlace) {
  const std::string path = "/tmp/npusim_npy_bad_" + std::to_string(::getpid()) + ".npy";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const auto b = with_dict("<c8", "(6,)");
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  }
  try {
    read_npy(path);
    FAIL() << "no error";
  } catch (const npusim::InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(std::string(e.what()), path + ": header: descr: " + e.detail());
  }
  std::remove(path.c_str());
}

namespace {
// Parses b; returns true if it parsed, false on InputError; anything else fails the test.
bool parses_or_input_error(const std::vector<uint8_t>& b) {
  try {
    const auto a = npy_test::parse(b);
    // A parsed array must be self-consistent, else later readers would overrun.
    EXPECT_EQ(static_cast<int64_t>(a.data.size()), a.size() * a.itemsize());
    a.to_float();
    return true;
  } catch (const npusim::InputError&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-input exception: " << e.what();
    return false;
  }
}
}  // namespace

TEST(NpyFuzz, TruncationsAndByteFlipsNeverCrash) {
  std::mt19937 rng(12345);
  int parsed = 0, rejected = 0;
  for (const char* hex : {kF4C, kF8Fortran, kI2Big, kV2Header, kV3Header, kScalarF8, kEmptyF4}) {
    const auto full = from_hex(hex);
    for (size_t n = 0; n <= full.size(); ++n)
      (parses_or_input_error({full.begin(), full.begin() + n}) ? parsed : rejected)++;
    for (int i = 0; i < 2000; ++i) {
      auto b = full;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < flips; ++k) b[rng() % b.size()] = static_cast<uint8_t>(rng());
      (parses_or_input_error(b) ? parsed : rejected)++;
    }
  }
  // Both outcomes must occur for the loop to exercise anything: flips confined to the payload
  // keep a file valid (about 5 % of 14000 here), flips elsewhere break it (a byte replacing a
  // padding space is no longer whitespace).
  EXPECT_GT(parsed, 300);
  EXPECT_GT(rejected, 5000);
}

TEST(NpyFuzz, HeaderTokenMutationsNeverCrash) {
  // Splice characters the grammar cares about into a valid dict text.
  const std::string base = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }";
  const std::string alphabet = "{}()[],:'\" \n0123456789-LTrueFalsdcp<>|=fiubV";
  std::mt19937 rng(777);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string h = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const size_t pos = rng() % (h.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: h.insert(pos, 1, c); break;
        case 1: if (pos < h.size()) h.erase(pos, 1); break;
        default: if (pos < h.size()) h[pos] = c; break;
      }
    }
    // Payload sized for the original shape: some mutants parse, most are rejected.
    parsed += parses_or_input_error(build(h, std::vector<uint8_t>(12, 0x5a))) ? 1 : 0;
  }
  EXPECT_GT(parsed, 0);
}
