// `sim sweep submit --slurm` on a real Slurm (label `cluster`, its own executable: cluster_tests).
// The test starts munged, slurmctld and slurmd on localhost from a generated slurm.conf (one node,
// 2 CPUs, ports of its own) in a temporary folder, submits a 32-point sweep as 4 array tasks,
// cancels one task midway, checks `sim sweep status` and `sim sweep merge` name the unfinished
// shard, submits again (only that shard runs), merges, and compares the results byte for byte
// with a local run. It stops the daemons it started (and they die with it: PR_SET_PDEATHSIG).
// Every wait has a deadline. Skipped, with the reason, without slurm-wlm and munge (Debian:
// scripts/setup --cluster) or when not root (slurmd launches jobs as their user).
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "tests/integration/test_util.h"

using namespace npusim::test;

namespace {

using Clock = std::chrono::steady_clock;

std::string find_program(const std::string& name) {
  std::string path = env_or("PATH", "/usr/bin:/bin");
  path += ":/usr/sbin:/sbin:/usr/local/sbin";
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = path.find(':', start);
    const std::string d = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!d.empty() && ::access((d + "/" + name).c_str(), X_OK) == 0) return d + "/" + name;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(s);
  return port;
}

// Output and exit status of a shell command, killed after timeout_s (`timeout` from coreutils).
ProcResult shell(const std::string& cmd, int timeout_s = 30) {
  ProcResult r;
  std::string quoted;
  for (char c : cmd) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  const std::string full = "timeout -k 2 " + std::to_string(timeout_s) + " sh -c '" + quoted + "' 2>&1";
  FILE* p = ::popen(full.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

ProcResult sim(const std::string& args, int timeout_s = 60) {
  return shell("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 \"" + sim_binary() + "\" " + args, timeout_s);
}

bool wait_until(const std::function<bool()>& done, double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

size_t lines_of(const std::string& path) {
  const std::string t = read_text(path);
  size_t n = 0;
  for (char c : t) n += c == '\n';
  return n;
}

std::string tail(const std::string& path, size_t bytes = 1500) {
  const std::string t = read_text(path);
  return "--- " + path + " ---\n" + (t.size() > bytes ? t.substr(t.size() - bytes) : t) + "\n";
}

// The daemons this test started, stopped in reverse order however the test ends.
class Daemons {
 public:
  ~Daemons() { stop(); }
  bool start(const std::vector<std::string>& argv, const std::string& log) {
    const pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
      ::setpgid(0, 0);
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    m_pids.push_back(pid);
    return true;
  }
  bool alive() const {
    for (pid_t p : m_pids) {
      int status;
      if (::waitpid(p, &status, WNOHANG) != 0) return false;
    }
    return true;
  }
  void stop() {
    for (auto it = m_pids.rbegin(); it != m_pids.rend(); ++it) {
      const pid_t p = *it;
      ::kill(p, SIGTERM);
      int status;
      bool gone = wait_until([&] { return ::waitpid(p, &status, WNOHANG) != 0; }, 10);
      if (!gone) {
        ::kill(p, SIGKILL);
        ::waitpid(p, &status, 0);
      }
    }
    m_pids.clear();
  }

 private:
  std::vector<pid_t> m_pids;
};

}  // namespace

TEST(SlurmCluster, SubmitCancelResubmitMergeEqualsLocalRun) {
  const auto t0 = Clock::now();
  std::string missing;
  std::map<std::string, std::string> bin;
  for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo", "timeout"}) {
    bin[p] = find_program(p);
    if (bin[p].empty()) missing += std::string(missing.empty() ? "" : ", ") + p;
  }
  if (!missing.empty())
    GTEST_SKIP() << "slurm-wlm / munge not installed (missing: " << missing
                 << "); scripts/setup --cluster installs slurmctld slurmd slurm-client munge";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: slurmd launches the jobs as their user";

  // A private cluster in a fresh folder (munged wants every folder above its socket searchable).
  std::string d = env_or("TMPDIR", "/tmp") + "/npusim_slurm_XXXXXX";
  ASSERT_NE(::mkdtemp(d.data()), nullptr);
  ::chmod(d.c_str(), 0755);
  struct RemoveDir {  // destroyed last: after the daemons stopped (they read slurm.conf)
    std::string dir;
    ~RemoveDir() {
      if (!::testing::Test::HasFailure()) shell("rm -rf " + dir);
      else std::cerr << "[ cluster  ] kept " << dir << " (logs)\n";
    }
  } remove_dir{d};
  for (const char* sub : {"state", "spool"}) ::mkdir((d + "/" + sub).c_str(), 0755);
  {
    std::ofstream key(d + "/munge.key", std::ios::binary);
    std::ifstream rnd("/dev/urandom", std::ios::binary);
    std::vector<char> k(1024);
    rnd.read(k.data(), static_cast<std::streamsize>(k.size()));
    key.write(k.data(), static_cast<std::streamsize>(k.size()));
  }
  ::chmod((d + "/munge.key").c_str(), 0400);
  const int ctld_port = free_port(), slurmd_port = free_port();
  ASSERT_GT(ctld_port, 0);
  ASSERT_NE(ctld_port, slurmd_port);
  const std::string conf = d + "/slurm.conf";
  std::ofstream(conf) << "ClusterName=npusimtest\n"
                      << "SlurmctldHost=localhost(127.0.0.1)\n"
                      << "SlurmctldPort=" << ctld_port << "\nSlurmdPort=" << slurmd_port << "\n"
                      << "SlurmUser=root\nSlurmdUser=root\n"
                      << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << d << "/munge.sock\n"
                      << "StateSaveLocation=" << d << "/state\nSlurmdSpoolDir=" << d << "/spool\n"
                      << "SlurmctldPidFile=" << d << "/slurmctld.pid\nSlurmdPidFile=" << d << "/slurmd.pid\n"
                      << "SlurmctldLogFile=" << d << "/slurmctld.log\nSlurmdLogFile=" << d << "/slurmd.log\n"
                      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                      << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
                      << "JobCompType=jobcomp/none\nSchedulerType=sched/builtin\n"
                      << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
                      << "ReturnToService=2\nMpiDefault=none\nSwitchType=switch/none\n"
                      << "NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n"
                      << "PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n";
  ::setenv("SLURM_CONF", conf.c_str(), 1);  // for sbatch/squeue/scancel, sim and the jobs

  Daemons daemons;
  std::vector<std::string> jobs;  // cancelled at the end whatever happens
  struct CancelJobs {
    std::vector<std::string>& jobs;
    ~CancelJobs() {
      for (const auto& j : jobs) shell("scancel " + j, 10);
      if (!jobs.empty())
        wait_until([&] { return shell("squeue -h -o %i", 10).output.find_first_not_of(" \n") == std::string::npos; }, 20);
    }
  };
  auto logs = [&] {
    return tail(d + "/munged.log") + tail(d + "/slurmctld.log") + tail(d + "/slurmd.log") + tail(d + "/slurmctld.out") +
           tail(d + "/slurmd.out");
  };
  ASSERT_TRUE(daemons.start({bin["munged"], "-F", "--key-file=" + d + "/munge.key", "--socket=" + d + "/munge.sock",
                             "--pid-file=" + d + "/munged.pid", "--seed-file=" + d + "/munged.seed",
                             "--log-file=" + d + "/munged.log"},
                            d + "/munged.out"));
  ASSERT_TRUE(wait_until([&] { return ::access((d + "/munge.sock").c_str(), F_OK) == 0; }, 15)) << logs() << tail(d + "/munged.out");
  ASSERT_TRUE(daemons.start({bin["slurmctld"], "-D", "-f", conf}, d + "/slurmctld.out"));
  ASSERT_TRUE(daemons.start({bin["slurmd"], "-D", "-f", conf, "-N", "localhost"}, d + "/slurmd.out"));
  CancelJobs cancel{jobs};  // declared after the daemons: runs before they stop
  ASSERT_TRUE(wait_until([&] { return shell("sinfo -h -o %T", 5).output.find("idle") != std::string::npos; }, 40))
      << "the node did not come up\n" << logs();
  std::cerr << "[ cluster  ] slurmctld and slurmd up in "
            << std::chrono::duration<double>(Clock::now() - t0).count() << " s\n";

  // 32 points of a llama2-7b prefill (about 0.3 s each): 8 per shard, long enough to cancel one midway.
  ASSERT_EQ(sim("zoo llama2-7b -o " + d + "/llama.json").exit_code, 0);
  std::ofstream(d + "/s.yaml") << "workloads:\n  - llama.json\nhw: npu\naxes:\n"
                               << "  - npu.pe_array.rows: [16, 32, 64, 128]\n"
                               << "  - memory.dram.bandwidth_gbps: 8:64:8\n";
  const std::string out = d + "/out";
  // The job id alone on stdout; what was submitted on stderr.
  auto r = sim("sweep submit " + d + "/s.yaml -o " + out + " --slurm --array-size 4 2>" + d + "/submit1.log");
  ASSERT_EQ(r.exit_code, 0) << r.output << read_text(d + "/submit1.log") << logs();
  const std::string job = r.output.substr(0, r.output.find('\n'));
  ASSERT_FALSE(job.empty());
  ASSERT_TRUE(std::all_of(job.begin(), job.end(), ::isdigit)) << r.output;
  jobs.push_back(job);
  EXPECT_NE(read_text(d + "/submit1.log").find("shard(s) 0-3 of 4 submitted as job " + job), std::string::npos)
      << read_text(d + "/submit1.log");

  // Cancel task 0 once it has finished a point or two.
  const std::string journal0 = out + "/shard_0/journal.jsonl";
  ASSERT_TRUE(wait_until([&] { return lines_of(journal0) >= 1; }, 60)) << sim("sweep status " + out).output << logs();
  ASSERT_EQ(shell("scancel " + job + "_0").exit_code, 0);
  // Gone from the queue, by a squeue that answered (a failing squeue prints no job either).
  auto gone = [&](const std::string& j) {
    const auto q = shell("squeue -h -r -o %i", 10);
    return q.exit_code == 0 && q.output.find(j + "_") == std::string::npos;
  };
  ASSERT_TRUE(wait_until([&] { return gone(job); }, 90))
      << shell("squeue -r").output << logs();
  const size_t done0 = lines_of(journal0);
  const double t_cancel = std::chrono::duration<double>(Clock::now() - t0).count();
  std::cerr << "[ cluster  ] task " << job << "_0 cancelled after " << done0 << " of 8 points; job " << job
            << " over at " << t_cancel << " s\n";
  ASSERT_LT(done0, 8u) << "the task finished before it was cancelled";
  r = sim("sweep status " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("incomplete"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(std::to_string(32 - (8 - done0)) + "/32"), std::string::npos) << r.output;
  r = sim("sweep merge " + out + " -o " + d + "/partial");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("shard 0/4 in " + out + "/shard_0 is incomplete"), std::string::npos) << r.output;

  // Submit again: only shard 0 runs, and resumes.
  r = sim("sweep submit " + d + "/s.yaml -o " + out + " --slurm 2>" + d + "/submit2.log");
  ASSERT_EQ(r.exit_code, 0) << r.output << read_text(d + "/submit2.log");
  const std::string job2 = r.output.substr(0, r.output.find('\n'));
  ASSERT_TRUE(!job2.empty() && std::all_of(job2.begin(), job2.end(), ::isdigit)) << r.output;
  jobs.push_back(job2);
  EXPECT_NE(job2, job);
  EXPECT_NE(read_text(d + "/submit2.log").find("shard(s) 0 of 4 submitted as job " + job2), std::string::npos)
      << read_text(d + "/submit2.log");
  ASSERT_TRUE(wait_until([&] { return sim("sweep status " + out, 10).exit_code == 0; }, 60))
      << sim("sweep status " + out).output << logs();
  ASSERT_TRUE(wait_until([&] { return gone(job2); }, 30));
  EXPECT_NE(read_text(out + "/logs/shard_0.job_" + job2 + ".out").find(std::to_string(done0) + " already done"), std::string::npos)
      << read_text(out + "/logs/shard_0.job_" + job2 + ".out");
  r = sim("sweep merge " + out + " -o " + d + "/merged");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::cerr << "[ cluster  ] resubmitted shard done and merged at " << std::chrono::duration<double>(Clock::now() - t0).count()
            << " s\n";

  // The same sweep on this machine, in one go: the same bytes.
  r = sim("sweep " + d + "/s.yaml -o " + d + "/local -j 2 -q", 90);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(d + "/merged/results.csv"), read_text(d + "/local/results.csv"));
  EXPECT_EQ(read_text(d + "/merged/results.jsonl"), read_text(d + "/local/results.jsonl"));
  EXPECT_EQ(lines_of(d + "/merged/results.csv"), 33u);

  std::cerr << "[ cluster  ] local run compared at " << std::chrono::duration<double>(Clock::now() - t0).count() << " s\n";
}

// The same workflow without a cluster: a fake sbatch and squeue on PATH record what they are
// asked and answer like Slurm; the array tasks run the written job script by hand. Runs
// everywhere (no skip): the script, the shard directories, status, resubmission of exactly the
// unfinished shards, the refusals, and merge naming the missing shard.
TEST(SlurmScript, SubmitStatusResubmitMergeWithAFakeSbatch) {
  const std::string d = scratch_dir("slurm_fake");
  shell("rm -rf " + d + "/out " + d + "/merged " + d + "/local " + d + "/other " + d + "/bin && mkdir -p " + d + "/bin");
  std::ofstream(d + "/bin/sbatch") << "#!/bin/sh\necho \"$@\" >> " << d << "/sbatch.log\necho 4242\n";
  // squeue lists task 1 as running while the file `running_1` exists.
  std::ofstream(d + "/bin/squeue") << "#!/bin/sh\n[ -e " << d << "/running_1 ] && echo '4242_1 RUNNING'\nexit 0\n";
  ::chmod((d + "/bin/sbatch").c_str(), 0755);
  ::chmod((d + "/bin/squeue").c_str(), 0755);
  const std::string path = "PATH=" + d + "/bin:$PATH ";
  std::ofstream(d + "/s.yaml") << "workloads:\n  - zoo: resnet18\nhw: npu\naxes:\n  - npu.pe_array.rows: [8, 16, 32]\n"
                               << "  - memory.dram.bandwidth_gbps: [16, 32]\n";
  const std::string out = d + "/out";
  auto submit = [&](const std::string& extra) {
    return shell(path + "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 \"" + sim_binary() + "\" sweep submit " + d + "/s.yaml -o " + out +
                 " --slurm " + extra + " 2>" + d + "/submit.err");
  };
  auto task = [&](int i) {
    return shell("SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " SLURM_CPUS_PER_TASK=1 bash " + out + "/sweep.sbatch", 60);
  };

  // --dry-run: the command, nothing submitted.
  auto r = submit("--array-size 3 --partition short --time 00:10:00 --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.output << read_text(d + "/submit.err");
  EXPECT_NE(r.output.find("sbatch --parsable --array=0-2 '" + out + "/sweep.sbatch'"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(d + "/sbatch.log"), "");
  const std::string script = read_text(out + "/sweep.sbatch");
  for (const char* line : {"#SBATCH --array=0-2", "#SBATCH --partition=short", "#SBATCH --time=00:10:00",
                           "#SBATCH --cpus-per-task=1", "--shard \"$SLURM_ARRAY_TASK_ID/3\"", " --resume "})
    EXPECT_NE(script.find(line), std::string::npos) << line << "\n" << script;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(::access((out + "/shard_" + std::to_string(i) + "/manifest.json").c_str(), F_OK) == 0);

  // Submit: the job id alone on stdout.
  r = submit("");
  ASSERT_EQ(r.exit_code, 0) << r.output << read_text(d + "/submit.err");
  EXPECT_EQ(r.output, "4242\n");
  EXPECT_NE(read_text(d + "/sbatch.log").find("--array=0-2 "), std::string::npos) << read_text(d + "/sbatch.log");
  // Tasks 0 and 2 run; task 1 never started.
  ASSERT_EQ(task(0).exit_code, 0);
  ASSERT_EQ(task(2).exit_code, 0);
  r = sim("sweep status " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("0/2       0  not started"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("4/6"), std::string::npos) << r.output;
  r = sim("sweep merge " + out + " -o " + d + "/merged");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("shard 1/3 in " + out + "/shard_1 is incomplete: 2 run(s) missing"), std::string::npos) << r.output;

  // Refusals: another array size, another sweep in the same directory.
  r = submit("--array-size 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(read_text(d + "/submit.err").find("was submitted as 3 array tasks"), std::string::npos) << read_text(d + "/submit.err");
  std::ofstream(d + "/other.yaml") << "workloads:\n  - zoo: resnet18\nhw: npu\naxes:\n  - npu.pe_array.rows: [8, 64]\n";
  r = sim("sweep submit " + d + "/other.yaml -o " + out + " --slurm --dry-run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("holds a different sweep"), std::string::npos) << r.output;

  // Task 1 still queued or running: nothing to submit; once gone, only shard 1 (no sweep file needed).
  std::ofstream(d + "/running_1") << "";
  r = submit("");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "");
  EXPECT_NE(read_text(d + "/submit.err").find("nothing to submit"), std::string::npos) << read_text(d + "/submit.err");
  r = shell(path + "\"" + sim_binary() + "\" sweep status " + out);
  EXPECT_NE(r.output.find("running (job 4242_1)"), std::string::npos) << r.output;
  ::unlink((d + "/running_1").c_str());
  r = shell(path + "\"" + sim_binary() + "\" sweep submit -o " + out + " --slurm");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string log = read_text(d + "/sbatch.log");
  EXPECT_NE(log.find("--array=1 "), std::string::npos) << log;
  ASSERT_EQ(task(1).exit_code, 0);
  r = sim("sweep status " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = sim("sweep merge " + out + " -o " + d + "/merged");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(sim("sweep " + d + "/s.yaml -o " + d + "/local -q -j 2").exit_code, 0);
  EXPECT_EQ(read_text(d + "/merged/results.csv"), read_text(d + "/local/results.csv"));
  EXPECT_EQ(read_text(d + "/merged/results.jsonl"), read_text(d + "/local/results.jsonl"));
  // Without sbatch on PATH: the script is written, the error says where.
  r = shell("PATH=/nonexistent \"" + sim_binary() + "\" sweep submit " + d + "/s.yaml -o " + d + "/other --slurm");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("sbatch not found"), std::string::npos) << r.output;
  shell("rm -rf " + d);
}
