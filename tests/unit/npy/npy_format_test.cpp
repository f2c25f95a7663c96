// .npy reading of files numpy wrote, the accepted header spellings, writing and round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>

#include "models/functional/npy.h"
#include "tests/unit/npy/npy_fixtures.h"
#include "tests/unit/npy/npy_test_util.h"

using namespace npusim::functional;
using namespace npy_fixtures;
using npy_test::build;
using npy_test::bytes_of;
using npy_test::from_hex;
using npy_test::parse;

namespace {
std::vector<float> range_f(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
  return v;
}
std::string temp_path(const std::string& tag) {
  return "/tmp/npusim_npy_" + tag + "_" + std::to_string(::getpid()) + ".npy";
}
}  // namespace

TEST(NpyNumpyFiles, V1COrderF4) {
  const auto a = parse(from_hex(kF4C));
  EXPECT_EQ(a.type, NpyType::F32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.to_float(), (std::vector<float>{1.5f, -2, 3.25f, 0, 1e-3f, -7}));
}

TEST(NpyNumpyFiles, FortranOrderIsTransposedToCOrder) {
  // Both are np.arange(n).reshape(shape) in Fortran layout: C-order reading gives 0, 1, 2...
  const auto f8 = parse(from_hex(kF8Fortran));
  EXPECT_EQ(f8.type, NpyType::F64);
  EXPECT_EQ(f8.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f8.to_float(), range_f(6));
  const auto i2 = parse(from_hex(kI2Fortran3d));
  EXPECT_EQ(i2.type, NpyType::I16);
  EXPECT_EQ(i2.shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(i2.to_float(), range_f(24));
}

TEST(NpyNumpyFiles, BigEndianIsConvertedToNative) {
  const auto a = parse(from_hex(kI2Big));
  EXPECT_EQ(a.type, NpyType::I16);
  EXPECT_EQ(a.to_float(), (std::vector<float>{1, -2, 0x1234}));
}

TEST(NpyNumpyFiles, Version2And3Headers) {
  const auto v2 = parse(from_hex(kV2Header));
  EXPECT_EQ(v2.type, NpyType::I32);
  EXPECT_EQ(v2.to_float(), range_f(4));
  const auto v3 = parse(from_hex(kV3Header));
  EXPECT_EQ(v3.type, NpyType::F32);
  EXPECT_EQ(v3.to_float(), (std::vector<float>{0.5f, -1}));
}

TEST(NpyNumpyFiles, BoolScalarAndEmpty) {
  const auto b = parse(from_hex(kBool));
  EXPECT_EQ(b.type, NpyType::Bool);
  EXPECT_EQ(b.to_float(), (std::vector<float>{1, 0, 1}));
  const auto s = parse(from_hex(kScalarF8));
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.to_double(), (std::vector<double>{2.5}));
  const auto e = parse(from_hex(kEmptyF4));
  EXPECT_EQ(e.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(e.size(), 0);
  EXPECT_TRUE(e.data.empty());
}

TEST(NpyNumpyFiles, HalfSubnormalInfNan) {
  const auto v = parse(from_hex(kF2Special)).to_float();
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], std::ldexp(1.0f, -24));  // smallest subnormal, bits 0x0001
  EXPECT_EQ(v[2], std::ldexp(1.0f, -14));  // smallest normal, bits 0x0400
  EXPECT_EQ(v[3], -INFINITY);
  EXPECT_EQ(v[4], INFINITY);
  EXPECT_TRUE(std::isnan(v[5]));
  EXPECT_EQ(v[6], 65504.0f);  // largest half
  EXPECT_EQ(v[7], -1.5f);
}

TEST(NpyNumpyFiles, Bf16ComesAsRawBitsUntilAskedFor) {
  for (const char* hex : {kBf16AsU2, kBf16AsV2}) {
    const auto raw = parse(from_hex(hex));
    EXPECT_EQ(raw.type, NpyType::U16);
    EXPECT_EQ(raw.to_float(), (std::vector<float>{0x3f80, 0xc020, 0x4049}));
    const auto bf = as_bf16(raw, "t.npy");
    EXPECT_EQ(bf.type, NpyType::BF16);
    // 0x4049 -> 0x40490000 = 3.140625, pi rounded to 8 significant bits.
    EXPECT_EQ(bf.to_float(), (std::vector<float>{1, -2.5f, 3.140625f}));
  }
}

TEST(NpyNumpyFiles, AsBf16RejectsNon16BitTypes) {
  try {
    as_bf16(parse(from_hex(kF4C)), "w.npy");
    FAIL() << "no error";
  } catch (const npusim::InputError& e) {
    EXPECT_EQ(e.file(), "w.npy");
    EXPECT_NE(e.detail().find("f32"), std::string::npos) << e.what();
  }
}

TEST(NpyWriter, MatchesNumpyByteForByte) {
  EXPECT_EQ(serialize_npy(make_npy(NpyType::F32, {2, 3}, {1.5f, -2, 3.25f, 0, 1e-3f, -7})),
            from_hex(kF4C));
  EXPECT_EQ(serialize_npy(make_npy(NpyType::Bool, {3}, {1, 0, 1})), from_hex(kBool));
  EXPECT_EQ(serialize_npy(make_npy(NpyType::F64, {}, {2.5f})), from_hex(kScalarF8));
  EXPECT_EQ(serialize_npy(make_npy(NpyType::F32, {0, 3}, {})), from_hex(kEmptyF4));
  EXPECT_EQ(serialize_npy(make_npy(NpyType::BF16, {3}, {1, -2.5f, 3.14159265f})),
            from_hex(kBf16AsU2));
}

TEST(NpyWriter, RoundTripsEveryTypeAndShapeThroughAFile) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 3, 4}};
  const std::vector<NpyType> types = {NpyType::F16, NpyType::BF16, NpyType::F32, NpyType::F64,
                                      NpyType::I8,  NpyType::U8,   NpyType::I16, NpyType::U16,
                                      NpyType::I32, NpyType::U32,  NpyType::I64, NpyType::U64,
                                      NpyType::Bool};
  const std::string path = temp_path("rt");
  for (NpyType t : types) {
    for (const auto& shape : shapes) {
      NpyArray probe;
      probe.shape = shape;
      std::vector<float> vals;
      const bool is_signed = t != NpyType::U8 && t != NpyType::U16 && t != NpyType::U32 &&
                             t != NpyType::U64 && t != NpyType::Bool;
      for (int64_t i = 0; i < probe.size(); ++i)
        vals.push_back(t == NpyType::Bool ? float(i % 2) : float(i % 7) - (is_signed ? 3 : 0));
      const NpyArray a = make_npy(t, shape, vals);
      write_npy(path, a);
      NpyArray b = read_npy(path);
      if (t == NpyType::BF16) b = as_bf16(b, path);  // BF16 is stored as '<u2'
      SCOPED_TRACE(std::string(npy_type_name(t)) + " ndim " + std::to_string(shape.size()));
      EXPECT_EQ(b.type, t);
      EXPECT_EQ(b.shape, shape);
      EXPECT_EQ(b.data, a.data);
      EXPECT_EQ(b.to_float(), vals);  // small integers are exact in every type
    }
  }
  std::remove(path.c_str());
}

TEST(NpyWriter, UnwritablePathIsAnInputError) {
  try {
    write_npy("/nonexistent_dir/x.npy", make_npy(NpyType::F32, {1}, {1}));
    FAIL() << "no error";
  } catch (const npusim::InputError& e) {
    EXPECT_EQ(e.file(), "/nonexistent_dir/x.npy");
  }
}

TEST(NpyReader, MissingFileNamesThePath) {
  try {
    read_npy("/nonexistent_dir/y.npy");
    FAIL() << "no error";
  } catch (const npusim::InputError& e) {
    EXPECT_EQ(e.file(), "/nonexistent_dir/y.npy");
    EXPECT_NE(e.detail().find("cannot open"), std::string::npos);
  }
}

TEST(NpyReader, HeaderSpellingsPythonAccepts) {
  const auto payload = bytes_of({1, 2, 3, 4, 5, 6});
  for (const std::string h : {
           "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",           // any key order
           "{ 'descr' :'<f4','fortran_order':False,'shape':(2,3) }",              // spacing
           "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3,),}",  // quotes, commas
           "{'descr': '<f4',\n\t'fortran_order': False,\r\n 'shape': (2L, 3L)}\n  ",  // py2 longs
       }) {
    SCOPED_TRACE(h);
    const auto a = parse(build(h, payload));
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.to_float(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }
}

TEST(NpyReader, DescrByteOrderSpellings) {
  // 0x0102 stored little endian is 01 02 -> 513 read little, 258 read big.
  const std::vector<uint8_t> two = {0x02, 0x01};
  const auto read1 = [&](const std::string& descr, const std::vector<uint8_t>& p) {
    return parse(build("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,)}", p));
  };
  EXPECT_EQ(read1("<u2", two).to_double()[0], 0x0102);
  EXPECT_EQ(read1("=u2", two).to_double()[0], 0x0102);  // native, little on the hosts we run
  EXPECT_EQ(read1("|u2", two).to_double()[0], 0x0102);  // numpy reads '|' as native too
  EXPECT_EQ(read1("u2", two).to_double()[0], 0x0102);
  EXPECT_EQ(read1(">u2", two).to_double()[0], 0x0201);
  EXPECT_EQ(read1(">u4", {0, 0, 1, 2}).to_double()[0], 0x0102);
  EXPECT_EQ(read1(">u8", {0, 0, 0, 0, 0, 0, 1, 2}).to_double()[0], 0x0102);
  EXPECT_EQ(read1(">f4", {0x3f, 0xc0, 0, 0}).to_float()[0], 1.5f);
  EXPECT_EQ(read1(">f8", {0xc0, 0x04, 0, 0, 0, 0, 0, 0}).to_float()[0], -2.5f);
  EXPECT_EQ(read1(">f2", {0x3e, 0x00}).to_float()[0], 1.5f);
  EXPECT_EQ(read1("<i1", {0xff}).to_float()[0], -1);
  EXPECT_EQ(read1(">i1", {0xfe}).to_float()[0], -2);
  EXPECT_EQ(read1("|u1", {0xfe}).to_float()[0], 254);
  EXPECT_EQ(read1(">i8", {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd}).to_float()[0], -3);
  EXPECT_EQ(read1("<u4", {0xff, 0xff, 0xff, 0xff}).to_double()[0], 4294967295.0);
}

TEST(NpyReader, Int64ToDoubleIsExactBelow2To53) {
  NpyArray a;
  a.type = NpyType::I64;
  a.shape = {1};
  const int64_t v = (int64_t{1} << 53) - 1;  // 9007199254740991, not a float but a double
  a.data.resize(8);
  std::memcpy(a.data.data(), &v, 8);
  EXPECT_EQ(a.to_double()[0], 9007199254740991.0);
}

TEST(NpyMake, IntegersRoundHalfEvenAndSaturate) {
  // 2.5 -> 2 and 3.5 -> 4 (ties to even); beyond the range -> the limit; NaN -> 0.
  EXPECT_EQ(make_npy(NpyType::I8, {7}, {2.5f, 3.5f, -2.5f, 300, -300, NAN, 126.6f}).to_float(),
            (std::vector<float>{2, 4, -2, 127, -128, 0, 127}));
  EXPECT_EQ(make_npy(NpyType::U8, {3}, {-1, 255.4f, 1e9f}).to_float(),
            (std::vector<float>{0, 255, 255}));
  EXPECT_EQ(make_npy(NpyType::I32, {2}, {3e9f, -3e9f}).to_double(),
            (std::vector<double>{2147483647.0, -2147483648.0}));
  EXPECT_EQ(make_npy(NpyType::U64, {2}, {1e30f, -5}).to_double(),
            (std::vector<double>{18446744073709551615.0, 0}));
  // Bool follows numpy's astype(bool): nonzero and NaN are true, -0.0 is false.
  EXPECT_EQ(make_npy(NpyType::Bool, {4}, {0.1f, -0.0f, NAN, 0}).data,
            (std::vector<uint8_t>{1, 0, 1, 0}));
}

TEST(NpyMake, HalfTypesRoundToNearestEven) {
  // 65520 is the midpoint of 65504 and 2^16: ties to even (mantissa 0) = inf.
  EXPECT_EQ(make_npy(NpyType::F16, {2}, {65519, 65520}).to_float(),
            (std::vector<float>{65504, INFINITY}));
  // bf16 keeps 8 significant bits: 1 + 2^-8 is the midpoint of 1 and 1 + 2^-7 -> 1 (even).
  EXPECT_EQ(make_npy(NpyType::BF16, {2}, {1 + 1.0f / 256, 1 + 3.0f / 256}).to_float(),
            (std::vector<float>{1, 1 + 4.0f / 256}));
}

TEST(NpyMake, ValueCountMustMatchShape) {
  EXPECT_THROW(make_npy(NpyType::F32, {2, 3}, {1, 2}), npusim::InternalError);
  EXPECT_THROW(make_npy(NpyType::F32, {-1}, {}), npusim::InternalError);
}

TEST(NpyTypes, ItemsizeDescrAndIrType) {
  EXPECT_EQ(npy_itemsize(NpyType::F16), 2);
  EXPECT_EQ(npy_itemsize(NpyType::U64), 8);
  EXPECT_EQ(npy_itemsize(NpyType::Bool), 1);
  EXPECT_EQ(npy_descr(NpyType::BF16), "<u2");
  EXPECT_EQ(npy_descr(NpyType::I8), "|i1");
  EXPECT_EQ(npy_ir_dtype(NpyType::BF16), npusim::ir::DType::BFloat16);
  EXPECT_EQ(npy_ir_dtype(NpyType::U16), std::nullopt);
}
