// Request traces (sim/llm/request_trace.h): the three formats told by their header, arrivals
// from the first request, failed rows left out, the scale, and bad rows refused by line.
#include <gtest/gtest.h>

#include <string>

#include "sim/ir/error.h"
#include "sim/llm/request_trace.h"

using namespace npusim::llm;

namespace {

std::string error_of(const std::string& text, double scale = 1) {
  try {
    parse_request_trace(text, "t.csv", scale);
  } catch (const npusim::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RequestTrace, NpusimsOwnCsvKeepsItsArrivals) {
  const RequestTrace t = parse_request_trace("arrival_s,input_tokens,output_tokens\n0.5,64,4\n1.25,32,8\n", "t.csv");
  EXPECT_EQ(t.format, "npusim");
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_DOUBLE_EQ(t.requests[0].arrival_ns, 0.5e9);
  EXPECT_DOUBLE_EQ(t.requests[1].arrival_ns, 1.25e9);
  EXPECT_EQ(t.requests[1].input, 32);
  EXPECT_EQ(t.requests[1].output, 8);
}

TEST(RequestTrace, AzureTimestampsBecomeSecondsFromTheFirstRequest) {
  // Azure LLM inference trace 2023 (code): a day boundary crossed, fractions of 7 digits.
  const RequestTrace t = parse_request_trace(
      "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n"
      "2023-11-16 23:59:59.5000000,4808,10\r\n"
      "2023-11-17 00:00:01.2500000,3180,8\r\n"
      "2023-11-17 00:01:01.2500000,100,0\r\n",
      "azure.csv");
  EXPECT_EQ(t.format, "azure");
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_DOUBLE_EQ(t.requests[0].arrival_ns, 0);
  EXPECT_NEAR(t.requests[1].arrival_ns, 1.75e9, 1e3);
  EXPECT_EQ(t.requests[0].input, 4808);
  EXPECT_EQ(t.skipped, 1);  // no output tokens: not served
}

TEST(RequestTrace, BurstGptColumnsAndAScale) {
  const RequestTrace t = parse_request_trace(
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
      "5,ChatGPT,472,18,490,Conversation log\n"
      "45,ChatGPT,1087,0,1087,Conversation log\n"
      "65,GPT-4,200,100,300,API log\n",
      "burst.csv", 4);
  EXPECT_EQ(t.format, "burstgpt");
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(t.requests[0].input, 472);
  EXPECT_EQ(t.requests[0].output, 18);
  EXPECT_DOUBLE_EQ(t.requests[1].arrival_ns, 60e9 / 4);  // 60 s after the first, four times as fast
  EXPECT_EQ(t.skipped, 1);
}

TEST(RequestTrace, BadTracesAreRefusedByLine) {
  EXPECT_NE(error_of("time,in,out\n0,1,1\n").find("line 1: not a request trace header"), std::string::npos);
  EXPECT_NE(error_of("arrival_s,input_tokens,output_tokens\n0,64\n").find("line 2: expected 3 comma-separated values"),
            std::string::npos);
  EXPECT_NE(error_of("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-01 00:00:00,1,1\n").find("line 2: expected a date"),
            std::string::npos);
  EXPECT_NE(error_of("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 10:00:00,1,1\n2023-11-16 09:59:59,1,1\n")
                .find("line 3: arrivals must not go back in time"),
            std::string::npos);
  EXPECT_NE(error_of("arrival_s,input_tokens,output_tokens\n0,0,4\n").find("line 2"), std::string::npos);
  EXPECT_NE(error_of("arrival_s,input_tokens,output_tokens\n0,2000000,4\n").find("at most 2^20"), std::string::npos);
  EXPECT_NE(error_of("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,m,1,0,1,x\n").find("no requests"),
            std::string::npos);
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of("arrival_s,input_tokens,output_tokens\n0,1,1\n", 0).find("--trace-scale"), std::string::npos);
}
