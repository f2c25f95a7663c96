// ARK plan semantics (sim/mapping/gpu_schedule.h): task-to-processor/slot assignment with
// granularity and the rotating start processor, and the codegen's barrier rule.
#include <gtest/gtest.h>

#include "sim/mapping/gpu_schedule.h"
#include "tests/unit/gpu/gpu_test_util.h"

using namespace npusim;
using mapping::ProcSpan;
using mapping::TaskSeq;
using Ids = std::vector<int64_t>;

TEST(GpuSchedule, Granularity1IsRoundRobinAndRotatesTheStartProcessor) {
  // RG over processors [0,4) with two task groups: A = tasks [0,10), then B = tasks [0,6).
  gpu::Program p;
  p.num_processors = 4;
  p.num_warps_per_processor = 1;
  p.task_infos = {test::tiny_task(0, 1, 0, 10), test::tiny_task(1, 1, 0, 6)};
  p.processor_groups = {test::one_rg_group(test::range(0, 4), test::range(0, 1), test::range(0, 0),
                                           {{0, test::range(0, 10), 1, ""}, {1, test::range(0, 6), 1, ""}})};
  const auto seqs = mapping::resource_group_seqs(p.processor_groups[0].resource_groups[0], p);
  ASSERT_EQ(seqs.size(), 2u);
  // A starts at processor 0: processor x runs x, x+4, x+8.
  EXPECT_EQ(seqs[0].proc_current, 0);
  EXPECT_EQ(mapping::slot_tasks(seqs[0], 0, 0), (Ids{0, 4, 8}));
  EXPECT_EQ(mapping::slot_tasks(seqs[0], 1, 0), (Ids{1, 5, 9}));
  EXPECT_EQ(mapping::slot_tasks(seqs[0], 3, 0), (Ids{3, 7}));
  // Next start = 0 + (0 + ceil(10/1)) mod 4 = 2: B's task 0 goes to processor 2.
  EXPECT_EQ(seqs[1].proc_current, 2);
  EXPECT_EQ(mapping::slot_tasks(seqs[1], 2, 0), (Ids{0, 4}));
  EXPECT_EQ(mapping::slot_tasks(seqs[1], 3, 0), (Ids{1, 5}));
  EXPECT_EQ(mapping::slot_tasks(seqs[1], 0, 0), (Ids{2}));
  EXPECT_EQ(mapping::slot_tasks(seqs[1], 1, 0), (Ids{3}));
}

TEST(GpuSchedule, Granularity3GivesConsecutiveTasksThenRotates) {
  // Tasks [0,10) over processors [0,3) with g = 3: p*3 + t%3 + (t/3)*3*3.
  TaskSeq s;
  s.proc_begin = 0, s.proc_end = 3, s.proc_current = 0, s.task_begin = 0, s.task_end = 10, s.granularity = 3;
  EXPECT_EQ(mapping::slot_tasks(s, 0, 0), (Ids{0, 1, 2, 9}));
  EXPECT_EQ(mapping::slot_tasks(s, 1, 0), (Ids{3, 4, 5}));
  EXPECT_EQ(mapping::slot_tasks(s, 2, 0), (Ids{6, 7, 8}));
  // Two processors: processor 0 gets 0,1,2 then 6,7,8 (t = 3 -> 0 + 0 + 1*3*2).
  s.proc_end = 2;
  EXPECT_EQ(mapping::slot_tasks(s, 0, 0), (Ids{0, 1, 2, 6, 7, 8}));
  EXPECT_EQ(mapping::slot_tasks(s, 1, 0), (Ids{3, 4, 5, 9}));

  // In a resource group: after [0,10) with g = 3 on 3 processors the start moves by
  // ceil(10/3) = 4 mod 3 = 1, so the next group's first 3 tasks go to processor 1.
  gpu::Program p;
  p.num_processors = 3;
  p.num_warps_per_processor = 1;
  p.task_infos = {test::tiny_task(0, 1, 0, 10), test::tiny_task(1, 1, 0, 5)};
  p.processor_groups = {test::one_rg_group(test::range(0, 3), test::range(0, 1), test::range(0, 0),
                                           {{0, test::range(0, 10), 3, ""}, {1, test::range(0, 5), 3, ""}})};
  const auto seqs = mapping::resource_group_seqs(p.processor_groups[0].resource_groups[0], p);
  EXPECT_EQ(seqs[1].proc_current, 1);
  EXPECT_EQ(mapping::slot_tasks(seqs[1], 1, 0), (Ids{0, 1, 2}));
  EXPECT_EQ(mapping::slot_tasks(seqs[1], 2, 0), (Ids{3, 4}));
  EXPECT_EQ(mapping::slot_tasks(seqs[1], 0, 0), Ids{});  // would start at 6 >= 5
}

TEST(GpuSchedule, ConsecutiveTasksOfAProcessorGoToDifferentSlots) {
  // 2 slots of 4 warps (8 warps, 1 warp... task needs 4): tasks [0,8) on 2 processors, g = 1.
  // Processor p runs t = 0,1,2,... as p + 2t; slot k takes t = k, k+2, ...
  TaskSeq s;
  s.proc_begin = 0, s.proc_end = 2, s.proc_current = 0, s.task_begin = 0, s.task_end = 8, s.num_slots = 2;
  EXPECT_EQ(mapping::slot_tasks(s, 0, 0), (Ids{0, 4}));
  EXPECT_EQ(mapping::slot_tasks(s, 0, 1), (Ids{2, 6}));
  EXPECT_EQ(mapping::slot_tasks(s, 1, 0), (Ids{1, 5}));
  EXPECT_EQ(mapping::slot_tasks(s, 1, 1), (Ids{3, 7}));
  EXPECT_EQ(mapping::slot_tasks(s, 1, 2), Ids{});  // no slot 2
  EXPECT_EQ(mapping::slot_tasks(s, 2, 0), Ids{});  // not in the group
}

TEST(GpuSchedule, RelativeProcessorFollowsTheDocumentedFormulaNotGridDim) {
  // RG [2,6) starting at processor 3 in a grid of 8: documented p(2) = (2-3) mod 4 = 3, so
  // processor 2 runs task 3 (the generated code's ((2+8-3) % 8) = 7 would give task 7).
  TaskSeq s;
  s.proc_begin = 2, s.proc_end = 6, s.proc_current = 3, s.task_begin = 0, s.task_end = 8;
  EXPECT_EQ(mapping::slot_tasks(s, 2, 0), (Ids{3, 7}));
  EXPECT_EQ(mapping::slot_tasks(s, 3, 0), (Ids{0, 4}));
  EXPECT_EQ(mapping::slot_tasks(s, 5, 0), (Ids{2, 6}));
}

TEST(GpuSchedule, SplitKTutorialBarriers) {
  // plan_2_split_k: PG0-4 on [0,108), PG5 Matmul on [0,64), PG6 Matmul on [64,108), PG7 Add
  // on [0,108). PG5 syncs the whole [0,108) (PG4 reaches outside it); PG6 does not intersect
  // PG5, so nothing separates them and they run concurrently; PG7 contains both: one
  // barrier over [0,108) makes the Add wait for both.
  const gpu::Program p = frontends::read_ark_plan(test::ark_file("tutorial/plan_2_split_k.json"));
  const auto b = mapping::plan_barriers(p);
  ASSERT_EQ(b.size(), 8u);
  const ProcSpan all{0, 108};
  EXPECT_TRUE(b[0].empty());
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(b[i], std::vector<ProcSpan>{all}) << "PG " << i;
  EXPECT_TRUE(b[6].empty()) << "PG6 must not wait for PG5";
  EXPECT_EQ(b[7], std::vector<ProcSpan>{all});

  const mapping::GpuSchedule s = mapping::build_schedule(p);
  EXPECT_EQ(s.barriers.size(), 6u);
  // Processor 70: task 70 of PG0-PG4 with a barrier after each, its PG6 tasks (relative
  // processor 6 of 44: tasks 6 and 50), the barrier before PG7, and no Add (PG7's resource
  // group is [0,64)).
  const auto& prog = s.programs[70];
  ASSERT_EQ(prog.size(), 12u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(prog[i].barrier, i % 2 == 1) << "step " << i;
    if (i % 2 == 0) {
      EXPECT_EQ(prog[i].slot_tasks, (std::vector<Ids>{{70}})) << "step " << i;
    }
  }
  EXPECT_FALSE(prog[10].barrier);
  EXPECT_EQ(s.seqs[prog[10].index].pg, 6);
  EXPECT_EQ(prog[10].slot_tasks, (std::vector<Ids>{{6, 50}}));
  EXPECT_TRUE(prog[11].barrier);
  EXPECT_EQ(s.barriers[prog[11].index].pg, 7);
  // Processor 10: PG5's task 10 right after the barrier before PG5, then PG7's task 10.
  const auto& p10 = s.programs[10];
  EXPECT_EQ(s.seqs[p10[p10.size() - 3].index].pg, 5);
  EXPECT_EQ(p10.back().slot_tasks, (std::vector<Ids>{{10}}));
  // One sync state per distinct range.
  for (const auto& x : s.barriers) EXPECT_EQ(x.state_id, 0);
}

TEST(GpuSchedule, PartialOverlapSyncsBothRangesAndEmptyGroupsAreSkipped) {
  gpu::Program p;
  p.num_processors = 128;
  p.num_warps_per_processor = 1;
  p.task_infos = {test::tiny_task(0, 1, 0, 4)};
  auto group = [](int64_t b, int64_t e) {
    return test::one_rg_group(test::range(b, e), test::range(0, 1), test::range(0, 0), {{0, test::range(0, 4), 1, ""}});
  };
  // [0,64), then an empty group, then [32,96) (partial overlap), then [100,128) (disjoint),
  // then [96,128) (contains nothing unsynced entirely... [100,128) lies inside it).
  p.processor_groups = {group(0, 64), group(10, 10), group(32, 96), group(100, 128), group(96, 128)};
  const auto b = mapping::plan_barriers(p);
  EXPECT_TRUE(b[1].empty());
  EXPECT_EQ(b[2], (std::vector<ProcSpan>{{0, 64}, {32, 96}}));
  EXPECT_TRUE(b[3].empty());
  // Unsynced: [32,96) (disjoint from [96,128)) and [100,128) (inside it): sync [96,128) only.
  EXPECT_EQ(b[4], (std::vector<ProcSpan>{{96, 128}}));
}
