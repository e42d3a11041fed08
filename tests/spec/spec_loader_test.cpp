// The Steer spec format: what a valid spec becomes, and the message each kind of
// malformed input gives.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "steer/error.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kOrigin = "specs/transpose/spec.json";

// The full format, as docs/spec.md shows it.
constexpr const char* kCompleteSpec = R"json({
  "name": "transpose",
  "description": ["Matrix transposition.", "Second line."],
  "parameters": [
    {"name": "TILE", "values": [8, 16, 32]},
    {"name": "BS", "values": "[32*i for i in range(1, 4)]"},
    {"name": "FLAG", "values": [true, false]},
    {"name": "MODE", "values": ["a", "b"]},
    {"name": "SCALE", "values": [1, 0.5]}
  ],
  "constraints": ["TILE <= BS", "FLAG or MODE == 'a'"],
  "kernel": {
    "name": "transpose_kernel",
    "sources": {"cuda": "kernel.cu", "opencl": "../common/kernel.cl"},
    "launch": {"grid": ["cdiv(N, TILE)", "cdiv(M, TILE)"], "block": ["BS", 1], "shared_memory_bytes": "4*TILE*TILE"},
    "arguments": [
      {"name": "out", "type": "float", "size": "N*M", "init": "zeros", "output": true},
      {"name": "in", "type": "double", "size": "N*M", "init": {"random": {"seed": 7, "low": -1, "high": 1}}},
      {"name": "table", "type": "uint8", "size": 256, "init": {"file": "data/table.bin"}},
      {"name": "ramp", "type": "int", "size": "N", "init": "iota"},
      {"name": "bias", "type": "int64", "size": "M", "init": {"constant": 2.5}},
      {"name": "n", "type": "int32", "value": "N"}
    ],
    "compiler_options": ["-DEXTRA=1"],
    "compute_bound": true,
    "timeout_ms": 2500
  },
  "sizes": {"small": {"N": 512, "M": 256}, "paper": {"N": 8192, "M": 8192}},
  "default_size": "paper",
  "flops": "2*N*M",
  "bytes": "8*N*M",
  "reference": {"cpu": "transpose", "tolerance": {"abs": 1e-6, "rel": 1e-5}}
})json";

// The message of the steer::Error that parsing `json` throws.
std::string error_of(const std::string& json) {
  try {
    parse_spec(json, kOrigin);
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no error for:\n" << json;
  return {};
}

// A minimal valid spec with `extra` spliced in as further top-level members.
std::string spec_with(const std::string& extra, const std::string& parameters = R"([{"name": "A", "values": [1, 2]}])") {
  return R"({"name": "t", "parameters": )" + parameters + (extra.empty() ? "" : ", " + extra) + "}";
}

TEST(spec_loader, ReadsEveryPartOfACompleteSpec) {
  Spec spec = parse_spec(kCompleteSpec, kOrigin);
  const fs::path directory = fs::absolute(kOrigin).lexically_normal().parent_path();

  EXPECT_EQ(spec.name, "transpose");
  EXPECT_EQ(spec.description, "Matrix transposition.\nSecond line.");
  EXPECT_EQ(spec.path, fs::absolute(kOrigin).lexically_normal());

  const auto& parameters = spec.space.parameters();
  ASSERT_EQ(parameters.size(), 5u);
  EXPECT_EQ(parameters[1].values, (std::vector<Value>{32, 64, 96}));
  EXPECT_EQ(parameters[2].type, ValueType::Bool);
  EXPECT_EQ(parameters[3].type, ValueType::String);
  EXPECT_EQ(parameters[4].type, ValueType::Float);  // ints among floats become floats
  EXPECT_TRUE(parameters[4].values[0].is_float());

  const auto& constraints = spec.space.constraints();
  ASSERT_EQ(constraints.size(), 2u);
  EXPECT_EQ(constraints[1].expression, "FLAG or MODE == 'a'");
  EXPECT_EQ(constraints[1].label, "constraints[1]");

  ASSERT_TRUE(spec.kernel.has_value());
  const KernelSpec& kernel = *spec.kernel;
  EXPECT_EQ(kernel.name, "transpose_kernel");
  EXPECT_EQ(kernel.sources.at(Language::Cuda), directory / "kernel.cu");
  EXPECT_EQ(kernel.sources.at(Language::OpenCL), (directory / "../common/kernel.cl").lexically_normal());
  EXPECT_EQ(kernel.launch.grid, (std::vector<std::string>{"cdiv(N, TILE)", "cdiv(M, TILE)", "1"}));
  EXPECT_EQ(kernel.launch.block, (std::vector<std::string>{"BS", "1", "1"}));
  EXPECT_EQ(kernel.launch.shared_memory_bytes, "4*TILE*TILE");
  EXPECT_EQ(kernel.compiler_options, (std::vector<std::string>{"-DEXTRA=1"}));
  EXPECT_TRUE(kernel.compute_bound);

  ASSERT_EQ(kernel.arguments.size(), 6u);
  const Argument& out = kernel.arguments[0];
  EXPECT_TRUE(out.is_buffer);
  EXPECT_TRUE(out.output);
  EXPECT_EQ(out.size, "N*M");
  EXPECT_EQ(out.init.kind, Initialiser::Kind::Zeros);
  const Argument& in = kernel.arguments[1];
  EXPECT_EQ(in.type, ElementType::F64);
  EXPECT_FALSE(in.output);
  EXPECT_EQ(in.init.kind, Initialiser::Kind::Random);
  EXPECT_EQ(in.init.seed, 7u);
  EXPECT_EQ(in.init.low, -1);
  EXPECT_EQ(in.init.high, 1);
  EXPECT_EQ(kernel.arguments[2].type, ElementType::U8);
  EXPECT_EQ(kernel.arguments[2].init.kind, Initialiser::Kind::File);
  EXPECT_EQ(kernel.arguments[2].init.file, directory / "data/table.bin");
  EXPECT_EQ(kernel.arguments[3].type, ElementType::I32);  // "int" is int32
  EXPECT_EQ(kernel.arguments[3].init.kind, Initialiser::Kind::Iota);
  EXPECT_EQ(kernel.arguments[4].init.kind, Initialiser::Kind::Constant);
  EXPECT_EQ(kernel.arguments[4].init.value, 2.5);
  const Argument& n = kernel.arguments[5];
  EXPECT_FALSE(n.is_buffer);
  EXPECT_EQ(n.value, "N");

  ASSERT_EQ(spec.sizes.size(), 2u);
  EXPECT_EQ(spec.sizes[0].name, "small");  // in the order written
  EXPECT_EQ(spec.default_size, "paper");
  const ProblemSize& small = spec.size("small");
  EXPECT_EQ(small.variables, (std::vector<std::pair<std::string, Value>>{{"N", 512}, {"M", 256}}));
  EXPECT_EQ(small.flops, 2.0 * 512 * 256);
  EXPECT_EQ(small.bytes, 8.0 * 512 * 256);
  EXPECT_EQ(spec.size("paper").flops, 2.0 * 8192 * 8192);

  EXPECT_EQ(spec.reference.kind, Reference::Kind::Cpu);
  EXPECT_EQ(spec.reference.cpu_function, "transpose");
  EXPECT_EQ(spec.reference.abs_tolerance, 1e-6);
  EXPECT_EQ(spec.reference.rel_tolerance, 1e-5);

  EXPECT_EQ(spec.hash.size(), 16u);
  EXPECT_EQ(spec.kernel->timeout_ms, 2500.0);
}

TEST(spec_loader, TheHangTimeoutIsAPositiveNumberAndOptional) {
  std::string spec = kCompleteSpec;
  EXPECT_FALSE(parse_spec(std::string(spec).replace(spec.find(",\n    \"timeout_ms\": 2500"), 24, ""), kOrigin)
                   .kernel->timeout_ms);
  const std::string negative = std::string(spec).replace(spec.find("2500"), 4, "-1");
  EXPECT_THAT(error_of(negative), HasSubstr("kernel.timeout_ms: expected a positive number of milliseconds"));
}

TEST(spec_loader, TheExampleInTheDocumentationLoads) {
  std::ifstream file(std::string(STEER_SOURCE_DIR) + "/docs/spec.md");
  std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  const std::size_t section = text.find("## A complete example");
  ASSERT_NE(section, std::string::npos);
  const std::size_t begin = text.find("```json\n", section) + 8;
  const std::string example = text.substr(begin, text.find("```", begin) - begin);
  Spec spec = parse_spec(example, kOrigin);
  EXPECT_EQ(spec.name, "transpose");
  EXPECT_GT(Space::build(spec.space).size(), 0u);
}

TEST(spec_loader, SpaceOnlySpecHasNoKernelAndNoSizes) {
  Spec spec = parse_spec(spec_with(R"("constraints": "A > 1")"), kOrigin);
  EXPECT_FALSE(spec.kernel.has_value());
  EXPECT_TRUE(spec.sizes.empty());
  EXPECT_EQ(spec.default_size, "");
  EXPECT_EQ(spec.reference.kind, Reference::Kind::None);
  ASSERT_EQ(spec.space.constraints().size(), 1u);
  EXPECT_EQ(spec.space.constraints()[0].label, "constraints");  // a single string
  EXPECT_EQ(Space::build(spec.space).size(), 1u);
}

TEST(spec_loader, DefaultSizeIsTheFirstWritten) {
  Spec spec = parse_spec(spec_with(R"("sizes": {"zeta": {"N": 1}, "alpha": {"N": 2}})"), kOrigin);
  EXPECT_EQ(spec.default_size, "zeta");
}

TEST(spec_loader, ReferenceConfigurationNamesEveryParameterInDefinitionOrder) {
  std::string json = R"({"name": "t",
    "parameters": [{"name": "A", "values": [1, 2]}, {"name": "F", "values": [0.5, 1.5]}],
    "kernel": {"name": "k", "sources": {"cuda": "k.cu"}, "launch": {"grid": [1], "block": [1]}},
    "reference": {"configuration": {"F": 0.5, "A": 2}}})";
  Spec spec = parse_spec(json, kOrigin);
  EXPECT_EQ(spec.reference.kind, Reference::Kind::Configuration);
  EXPECT_EQ(spec.reference.configuration, (std::vector<std::pair<std::string, Value>>{{"A", 2}, {"F", 0.5}}));
}

// A kernel with two outputs, for the references that name outputs.
const std::string kTwoOutputKernel = R"json("sizes": {"small": {"N": 64}, "large": {"N": 256}},
  "kernel": {"name": "k", "sources": {"opencl": "k.cl"}, "launch": {"grid": ["cdiv(N, A)"], "block": ["A"]},
    "arguments": [{"name": "in", "type": "float", "size": "N", "init": "random"},
                  {"name": "out", "type": "float", "size": "N", "output": true},
                  {"name": "count", "type": "uint32", "size": 1, "output": true}]})json";

TEST(spec_loader, ReferenceFromFilesOfExpectedOutputsWithAComparisonPerOutput) {
  Spec spec = parse_spec(spec_with(kTwoOutputKernel + R"(, "reference": {
    "outputs": {"out": "expected/out_{size}.npy"},
    "tolerance": {"abs": 0.5},
    "compare": {"out": {"ulps": 4}, "count": "ignore"}})"), kOrigin);
  const fs::path directory = fs::absolute(kOrigin).lexically_normal().parent_path();
  EXPECT_EQ(spec.reference.kind, Reference::Kind::Files);
  EXPECT_EQ(spec.reference.expected_files.at("out"), directory / "expected/out_{size}.npy");
  EXPECT_EQ(spec.reference.comparison("out").kind, Comparison::Kind::Ulps);
  EXPECT_EQ(spec.reference.comparison("out").ulps, 4u);
  EXPECT_EQ(spec.reference.comparison("count").kind, Comparison::Kind::Ignore);
  // An output without a comparison of its own is compared with the tolerance.
  const Comparison other = spec.reference.comparison("elsewhere");
  EXPECT_EQ(other.kind, Comparison::Kind::Tolerance);
  EXPECT_EQ(other.abs, 0.5);
  EXPECT_EQ(other.rel, 1e-4);
}

TEST(spec_loader, ComparisonsByToleranceGrantOnlyTheBoundsGiven) {
  Spec spec = parse_spec(spec_with(kTwoOutputKernel + R"(, "reference": {"cpu": "f",
    "compare": {"out": {"abs": 0.01}, "count": "exact"}})"), kOrigin);
  EXPECT_EQ(spec.reference.comparison("out").abs, 0.01);
  EXPECT_EQ(spec.reference.comparison("out").rel, 0);
  EXPECT_EQ(spec.reference.comparison("count").kind, Comparison::Kind::Tolerance);
  EXPECT_EQ(spec.reference.comparison("count").abs, 0);
  EXPECT_EQ(spec.reference.comparison("count").rel, 0);
}

TEST(spec_loader, ReferenceKernelHasItsOwnSourceAndGeometryOfSizeVariables) {
  Spec spec = parse_spec(spec_with(kTwoOutputKernel + R"(, "reference": {"kernel": {
    "name": "k_naive", "sources": {"opencl": "naive.cl"}, "launch": {"grid": ["N"], "block": [1]}}})"), kOrigin);
  const fs::path directory = fs::absolute(kOrigin).lexically_normal().parent_path();
  EXPECT_EQ(spec.reference.kind, Reference::Kind::Kernel);
  EXPECT_EQ(spec.reference.kernel.name, "k_naive");
  EXPECT_EQ(spec.reference.kernel.sources.at(Language::OpenCL), directory / "naive.cl");
  EXPECT_EQ(spec.reference.kernel.launch.grid, (std::vector<std::string>{"N", "1", "1"}));
}

TEST(spec_errors, ReferencesThatNameOutputs) {
  const auto reference_error = [](const std::string& reference) {
    return error_of(spec_with(kTwoOutputKernel + R"(, "reference": )" + reference));
  };
  EXPECT_EQ(reference_error(R"({"outputs": {"in": "in.npy"}})"),
            "specs/transpose/spec.json: reference.outputs.in: 'in' is not an output argument of the kernel "
            "(outputs: out, count)");
  EXPECT_EQ(reference_error(R"({"outputs": {"out": "out.npy"}})"),
            "specs/transpose/spec.json: reference: output 'count' has no expected file: add it to 'outputs', or "
            "compare it with \"ignore\" (\"compare\": {\"count\": \"ignore\"})");
  EXPECT_EQ(reference_error(R"({"cpu": "f", "compare": {"out": "close"}})"),
            "specs/transpose/spec.json: reference.compare.out: unknown comparison 'close'; expected \"ignore\", "
            "\"exact\", {\"abs\": a, \"rel\": r} or {\"ulps\": n}");
  EXPECT_EQ(reference_error(R"({"cpu": "f", "compare": {"out": {"ulps": 2, "abs": 1}}})"),
            "specs/transpose/spec.json: reference.compare.out: give either 'ulps' or 'abs'/'rel', not both");
  EXPECT_EQ(reference_error(R"({"cpu": "f", "compare": {"out": {"ulps": -1}}})"),
            "specs/transpose/spec.json: reference.compare.out.ulps: expected a non-negative number of units in the "
            "last place");
  // A reference kernel runs the same way for every configuration: no tuning parameters.
  EXPECT_THAT(reference_error(R"({"kernel": {"sources": {"opencl": "r.cl"}, "launch": {"grid": ["N / A"], "block": [1]}}})"),
              HasSubstr("unknown"));
}

TEST(spec_loader, HashFollowsTheBytes) {
  std::string text = spec_with("");
  EXPECT_EQ(parse_spec(text, kOrigin).hash, parse_spec(text, "elsewhere.json").hash);
  EXPECT_NE(parse_spec(text, kOrigin).hash, parse_spec(text + " ", kOrigin).hash);
}

TEST(spec_loader, ValueListExpressions) {
  auto values_of = [](const std::string& expression) {
    return parse_spec(spec_with("", R"([{"name": "A", "values": ")" + expression + R"("}])"), kOrigin)
        .space.parameters()[0]
        .values;
  };
  EXPECT_EQ(values_of("range(1, 5)"), (std::vector<Value>{1, 2, 3, 4}));
  EXPECT_EQ(values_of("[32*i for i in range(1, 4)]"), (std::vector<Value>{32, 64, 96}));
  EXPECT_EQ(values_of("[2**i for i in range(6) if i != 3]"), (std::vector<Value>{1, 2, 4, 16, 32}));
  EXPECT_EQ(values_of("['a', 'b']"), (std::vector<Value>{"a", "b"}));
  EXPECT_EQ(values_of("[i for i in range(1, 10) if i <= 2 or i >= 8]"), (std::vector<Value>{1, 2, 8, 9}));
}

TEST(spec_loader, SizeLookupNamesTheChoices) {
  Spec spec = parse_spec(spec_with(R"("sizes": {"small": {"N": 1}, "paper": {"N": 2}})"), kOrigin);
  try {
    spec.size("huge");
    FAIL() << "no error";
  } catch (const SpecError& error) {
    EXPECT_STREQ(error.what(), "spec 't' has no size 'huge' (sizes: small, paper)");
  }
}

// --- malformed input: one test per kind, each checking the message a user sees ---

TEST(spec_errors, MalformedJsonGivesLineAndColumn) {
  EXPECT_THAT(error_of("{\n  \"name\": \"t\",\n  \"parameters\": [}\n"),
              StartsWith("specs/transpose/spec.json: malformed JSON: parse error at line 3, column 18: "));
}

TEST(spec_errors, NumbersOutOfRangeNameTheirPlace) {
  EXPECT_EQ(error_of("{\"name\": \"t\",\n \"parameters\": [{\"name\": \"A\", \"values\": [1, 1e999]}]}"),
            "specs/transpose/spec.json: line 2, column 45: the number 1e999 is too large");
  // Past 64 bits an integer would be read as a rounded double without a word.
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "A", "values": [18446744073709551616]}])")).substr(0, 26),
            "specs/transpose/spec.json:");
  EXPECT_THAT(error_of(spec_with("", R"([{"name": "A", "values": [18446744073709551616]}])")),
              ::testing::EndsWith("the integer 18446744073709551616 does not fit in 64 bits"));
  EXPECT_THAT(error_of(spec_with("", R"([{"name": "A", "values": [-9223372036854775809]}])")),
              ::testing::EndsWith("the integer -9223372036854775809 does not fit in 64 bits"));
  // The extremes of a value still read, and numbers inside strings are text.
  EXPECT_NO_THROW(parse_spec(spec_with("", R"([{"name": "A", "values": [9223372036854775807, -9223372036854775808]}])"),
                             kOrigin));
  EXPECT_NO_THROW(parse_spec(spec_with(R"("description": "1e999 and 99999999999999999999999")"), kOrigin));
}

TEST(spec_errors, WrongTypeNamesFilePathAndType) {
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "A", "values": [1]}, {"name": "B", "values": 3}])")),
            "specs/transpose/spec.json: parameters[1].values: expected a list or a list expression, got a number");
  EXPECT_EQ(error_of(R"({"name": 5, "parameters": []})"),
            "specs/transpose/spec.json: name: expected a string, got a number");
  EXPECT_EQ(error_of("[1, 2]"), "specs/transpose/spec.json: expected an object, got a list");
}

TEST(spec_errors, UnknownKeyIsRejectedWithASuggestion) {
  EXPECT_THAT(error_of(R"({"name": "t", "paramters": []})"),
              StartsWith("specs/transpose/spec.json: unknown key 'paramters' (did you mean 'parameters'?); "
                         "expected one of: $schema, name, "));
  EXPECT_EQ(error_of(spec_with(R"("kernel": {"name": "k", "sources": {"cuda": "k.cu"},
                                             "launch": {"grid": [1], "blok": [1]}})")),
            "specs/transpose/spec.json: kernel.launch: unknown key 'blok' (did you mean 'block'?); "
            "expected one of: grid, block, shared_memory_bytes");
}

TEST(spec_errors, MissingRequiredKey) {
  EXPECT_EQ(error_of(R"({"name": "t"})"), "specs/transpose/spec.json: missing required key 'parameters'");
  EXPECT_EQ(error_of(spec_with("", R"([{"values": [1]}])")),
            "specs/transpose/spec.json: parameters[0]: missing required key 'name'");
}

TEST(spec_errors, DuplicateKeyIsRejected) {
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "A", "values": [1], "values": [2]}])")),
            "specs/transpose/spec.json: parameters[0]: duplicate key 'values'");
}

TEST(spec_errors, ValueListProblems) {
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "A", "values": [1]}, {"name": "B", "values": []}])")),
            "specs/transpose/spec.json: parameters[1].values: empty value list: a parameter needs at least one value");
  EXPECT_EQ(error_of(spec_with("", R"js([{"name": "A", "values": "range(0)"}])js")),
            "specs/transpose/spec.json: parameters[0].values: empty value list: a parameter needs at least one value");
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "A", "values": [1, 2, 1]}])")),
            "specs/transpose/spec.json: parameters[0].values: value 1 appears more than once");
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "A", "values": [1, "x"]}])")),
            "specs/transpose/spec.json: parameters[0].values: mixes int and string values (1 and 'x'); "
            "a parameter's values share one type");
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "A", "values": [[1]]}])")),
            "specs/transpose/spec.json: parameters[0].values[0]: expected a number, boolean or string, got a list");
}

TEST(spec_errors, ValueListExpressionErrorKeepsItsPosition) {
  try {
    parse_spec(spec_with("", R"([{"name": "A", "values": "[1, 2"}])"), kOrigin);
    FAIL() << "no error";
  } catch (const ExpressionError& error) {
    EXPECT_THAT(error.what(), StartsWith("specs/transpose/spec.json: parameters[0].values: "));
    EXPECT_EQ(error.expression(), "[1, 2");
  }
}

TEST(spec_errors, ParameterNames) {
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "A", "values": [1]}, {"name": "A", "values": [2]}])")),
            "specs/transpose/spec.json: parameters[1].name: parameter 'A' is defined twice");
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "2A", "values": [1]}])")),
            "specs/transpose/spec.json: parameters[0].name: '2A' is not a valid name: use letters, digits and '_', "
            "not starting with a digit");
  EXPECT_EQ(error_of(spec_with("", R"([{"name": "max", "values": [1]}])")),
            "specs/transpose/spec.json: parameters[0].name: 'max' is a word of the expression language; "
            "choose another name");
}

TEST(spec_errors, UnknownParameterInConstraintNamesItAndItsPosition) {
  const std::string parameters = R"([{"name": "TILE_X", "values": [1, 2]}])";
  try {
    parse_spec(spec_with(R"("constraints": ["TILE_X > 0", "TILE_X <= TILE_Y"])", parameters), kOrigin);
    FAIL() << "no error";
  } catch (const ExpressionError& error) {
    EXPECT_THAT(error.what(), StartsWith("specs/transpose/spec.json: constraints[1]: "));
    EXPECT_THAT(error.what(), HasSubstr("'TILE_Y'"));
    EXPECT_EQ(error.expression(), "TILE_X <= TILE_Y");
    EXPECT_EQ(error.position(), 10u);
    EXPECT_THAT(error.detailed(), HasSubstr("  TILE_X <= TILE_Y\n            ^"));
  }
}

TEST(spec_errors, DivisionByZeroInAConstraintNamesTheConstraint) {
  Spec spec = parse_spec(spec_with(R"("constraints": ["A > 0", "10 % (A - 1) == 0"])"), kOrigin);
  try {
    Space::build(spec.space);
    FAIL() << "no error";
  } catch (const ExpressionError& error) {
    EXPECT_THAT(error.what(), HasSubstr("constraints[1]"));
    EXPECT_THAT(error.what(), HasSubstr("zero"));
    EXPECT_EQ(error.expression(), "10 % (A - 1) == 0");
  }
}

TEST(spec_errors, NoValidConfigurationNamesTheConstraintThatRemovedTheMost) {
  const std::string parameters = R"([{"name": "A", "values": [1, 2, 3, 4]}, {"name": "B", "values": [1, 2]}])";
  Spec spec = parse_spec(spec_with(R"("constraints": ["B == 1", "A > 10"])", parameters), kOrigin);
  try {
    Space::build(spec.space);
    FAIL() << "no error";
  } catch (const SpaceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no valid configuration"));
    EXPECT_THAT(error.what(), HasSubstr("constraints[1]"));
  }
}

TEST(spec_errors, ConstraintMustBeTextOrAListOfText) {
  EXPECT_EQ(error_of(spec_with(R"("constraints": 3)")),
            "specs/transpose/spec.json: constraints: expected a constraint expression or a list of them, got a number");
  EXPECT_EQ(error_of(spec_with(R"("constraints": ["A > 0", " "])")),
            "specs/transpose/spec.json: constraints[1]: expected a non-empty string");
}

TEST(spec_errors, SizeProblems) {
  EXPECT_EQ(error_of(spec_with(R"("sizes": {"small": {"N": 1}}, "default_size": "huge")")),
            "specs/transpose/spec.json: default_size: 'huge' is not among the sizes (small)");
  EXPECT_EQ(error_of(spec_with(R"("default_size": "huge")")),
            "specs/transpose/spec.json: default_size: 'huge' is not among the sizes (the spec defines no sizes)");
  EXPECT_EQ(error_of(spec_with(R"("sizes": {"small": {"N": 1, "M": 2}, "paper": {"N": 3}})")),
            "specs/transpose/spec.json: sizes.paper: lacks variable 'M', which size 'small' defines "
            "(every size defines the same variables)");
  EXPECT_EQ(error_of(spec_with(R"("sizes": {"small": {"A": 1}})")),
            "specs/transpose/spec.json: sizes.small.A: 'A' is also a parameter; a size variable needs a name of its own");
  EXPECT_EQ(error_of(spec_with(R"("sizes": {"small": {"N": 0}}, "flops": "N - 1")")),
            "specs/transpose/spec.json: flops: evaluates to -1 for size 'small'; expected a non-negative amount");
}

TEST(spec_errors, UnknownReferenceKind) {
  const std::string kernel = R"("kernel": {"name": "k", "sources": {"cuda": "k.cu"}, "launch": {"grid": [1], "block": [1]}})";
  EXPECT_EQ(error_of(spec_with(kernel + R"(, "reference": {"gpu": "x"})")),
            "specs/transpose/spec.json: reference: unknown key 'gpu' (did you mean 'cpu'?); "
            "expected one of: cpu, configuration, outputs, kernel, tolerance, compare");
  EXPECT_EQ(error_of(spec_with(kernel + R"(, "reference": {"tolerance": {"abs": 1}})")),
            "specs/transpose/spec.json: reference: expected one of 'cpu' (a CPU reference compiled into Steer), "
            "'outputs' (files of expected outputs), 'kernel' (a reference kernel) or 'configuration' (a configuration "
            "whose outputs are the reference)");
  EXPECT_EQ(error_of(spec_with(kernel + R"(, "reference": {"cpu": "x", "outputs": {"y": "y.npy"}})")),
            "specs/transpose/spec.json: reference: give only one of 'cpu', 'outputs', 'kernel', 'configuration'");
  EXPECT_EQ(error_of(spec_with(kernel + R"(, "reference": {"configuration": {"A": 3}})")),
            "specs/transpose/spec.json: reference.configuration.A: 3 is not among the values of 'A'");
  EXPECT_EQ(error_of(spec_with(R"("reference": {"cpu": "x"})")),
            "specs/transpose/spec.json: reference: a reference needs a 'kernel' section to validate");
}

TEST(spec_errors, KernelProblems) {
  auto kernel_error = [](const std::string& kernel) {
    return error_of(spec_with(R"("sizes": {"small": {"N": 4}}, "kernel": )" + kernel));
  };
  EXPECT_EQ(kernel_error(R"({"name": "k", "sources": {}, "launch": {"grid": [1], "block": [1]}})"),
            "specs/transpose/spec.json: kernel.sources: expected at least one of 'cuda', 'opencl'");
  EXPECT_EQ(kernel_error(R"({"name": "k", "sources": {"cuda": "k.cu"}, "launch": {"grid": [1, 1, 1, 1], "block": [1]}})"),
            "specs/transpose/spec.json: kernel.launch.grid: expected 1 to 3 dimensions, got 4");
  const std::string head = R"({"name": "k", "sources": {"cuda": "k.cu"}, "launch": {"grid": [1], "block": [1]}, "arguments": )";
  EXPECT_EQ(kernel_error(head + R"([{"name": "x", "type": "half", "size": "N"}]})"),
            "specs/transpose/spec.json: kernel.arguments[0].type: unknown element type 'half'; expected one of: "
            "float, double, int32, uint32, int64, uint64, int8, uint8 (int is int32)");
  EXPECT_EQ(kernel_error(head + R"([{"name": "x", "type": "float", "value": "N", "size": "N"}]})"),
            "specs/transpose/spec.json: kernel.arguments[0]: 'size' belongs to buffers; an argument with 'value' is a scalar");
  EXPECT_EQ(kernel_error(head + R"([{"name": "x", "type": "float", "size": "N - 4"}]})"),
            "specs/transpose/spec.json: kernel.arguments[0].size: expected a positive whole number of elements, "
            "got 0 for size 'small'");
  EXPECT_EQ(kernel_error(head + R"([{"name": "x", "type": "float", "size": "N", "init": "ones"}]})"),
            "specs/transpose/spec.json: kernel.arguments[0].init: unknown initialiser 'ones'; expected \"zeros\", "
            "\"iota\", \"random\", {\"constant\": v}, {\"random\": {...}} or {\"file\": path}");
  EXPECT_EQ(kernel_error(head + R"([{"name": "x", "type": "float", "size": "N", "init": {"random": {"low": 1, "high": 0}}}]})"),
            "specs/transpose/spec.json: kernel.arguments[0].init.random: low (1) must be below high (0)");
  // A buffer's length may use size variables only, not parameters.
  try {
    parse_spec(spec_with(R"("sizes": {"small": {"N": 4}}, "kernel": )" + head + R"([{"name": "x", "type": "float", "size": "N*A"}]})"),
               kOrigin);
    FAIL() << "no error";
  } catch (const ExpressionError& error) {
    EXPECT_THAT(error.what(), StartsWith("specs/transpose/spec.json: kernel.arguments[0].size: "));
    EXPECT_THAT(error.what(), HasSubstr("'A'"));
  }
}

TEST(spec_errors, MissingFileIsNamed) {
  try {
    load_spec("no/such/spec.json");
    FAIL() << "no error";
  } catch (const SpecError& error) {
    EXPECT_STREQ(error.what(), "spec file 'no/such/spec.json' does not exist");
  }
}

}  // namespace
}  // namespace steer
