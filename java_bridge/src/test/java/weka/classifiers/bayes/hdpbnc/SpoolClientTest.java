package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * The client side of the spool protocol against a fake daemon played by the test itself (it holds
 * the lock of daemons/fake.lock, claims, and publishes what a scenario asks), so the waiting,
 * failure, death, timeout and interruption paths are tested without Python.
 */
class SpoolClientTest {

  @TempDir
  Path m_Spool;
  FileChannel m_LockChannel;
  FileLock m_Lock;
  ExecutorService m_Ex;

  @BeforeEach
  void fakeDaemon() throws Exception {
    Spool.create(m_Spool);
    m_LockChannel = FileChannel.open(m_Spool.resolve("daemons").resolve("fake.lock"), StandardOpenOption.CREATE,
      StandardOpenOption.READ, StandardOpenOption.WRITE);
    m_Lock = m_LockChannel.lock(0, 1, false);
    m_Ex = Executors.newCachedThreadPool();
  }

  /** Every client a test made: their monitor threads must be done before the spool is deleted. */
  final List<SpoolClient> m_Clients = new ArrayList<>();

  @AfterEach
  void release() throws Exception {
    m_Ex.shutdownNow();
    // a failed job's monitor writes the cancel marker and cleans up from its own thread: the fake daemon
    // answers the marker as a daemon does (the job to failed/, cancelled), so that the monitor finishes
    // before JUnit deletes the temporary spool under it
    for (SpoolClient c : m_Clients) {
      SpoolClient.Monitor m = c.monitor();
      long end = System.currentTimeMillis() + 5000;
      while (m != null && m.isAlive() && System.currentTimeMillis() < end) {
        answerCancels();
        m.join(20);
      }
      if (m != null) {
        m.interrupt();
        m.join(2000);
      }
    }
    if (m_Lock.isValid()) {
      m_Lock.release();
    }
    m_LockChannel.close();
  }

  /** As the fake daemon: every job in new/ or claimed/fake/ with a cancel marker goes to failed/, cancelled. */
  void answerCancels() throws Exception {
    for (Path dir : new Path[] {m_Spool.resolve("new"), m_Spool.resolve("claimed").resolve("fake")}) {
      if (!Files.isDirectory(dir)) {
        continue;
      }
      List<Path> jobs;
      try (Stream<Path> s = Files.list(dir)) {
        jobs = s.filter(p -> Files.exists(m_Spool.resolve("cancel").resolve(p.getFileName().toString())))
          .collect(java.util.stream.Collectors.toList());
      }
      for (Path job : jobs) {
        Files.copy(SpoolGoldenTest.spoolGolden().resolve("error").resolve("cancelled.json"),
          job.resolve("error.json"), StandardCopyOption.REPLACE_EXISTING);
        Files.move(job, m_Spool.resolve("failed").resolve(job.getFileName()), StandardCopyOption.ATOMIC_MOVE);
      }
    }
  }

  static Instances weather() throws Exception {
    Instances d = DataSource.read(TestFiles.data().resolve("weather.nominal.arff").toString());
    d.setClassIndex(d.numAttributes() - 1);
    return d;
  }

  SpoolClient client(int timeout) {
    SpoolClient c = new SpoolClient(m_Spool, "/nonexistent/python3", false, timeout, false);
    m_Clients.add(c);
    return c;
  }

  /** Waits for a published job, claims it as the fake daemon; returns claimed/fake/J. */
  Path claim() throws Exception {
    long end = System.currentTimeMillis() + 20000;
    while (System.currentTimeMillis() < end) {
      try (Stream<Path> s = Files.list(m_Spool.resolve("new"))) {
        Path job = s.filter(p -> !p.getFileName().toString().startsWith(".")).findFirst().orElse(null);
        if (job != null) {
          Path dst = m_Spool.resolve("claimed").resolve("fake");
          Files.createDirectories(dst);
          return Files.move(job, dst.resolve(job.getFileName()), StandardCopyOption.ATOMIC_MOVE);
        }
      }
      Thread.sleep(20);
    }
    throw new AssertionError("nothing published");
  }

  Future<Path> train(SpoolClient c) {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("structure", "kdb");
    return m_Ex.submit(() -> c.train(weather(), params));
  }

  @Test
  void aYoungJobIsLookedAtSoonAndAnOldOneEveryPollInterval() {
    assertEquals(SpoolClient.BRISK_POLL_MILLIS, SpoolClient.nextLookMillis(0));
    assertEquals(SpoolClient.BRISK_POLL_MILLIS, SpoolClient.nextLookMillis(50));
    assertEquals(40, SpoolClient.nextLookMillis(400)); // a tenth of the job's age
    assertEquals(SpoolClient.POLL_MILLIS, SpoolClient.nextLookMillis(2000));
    assertEquals(SpoolClient.POLL_MILLIS, SpoolClient.nextLookMillis(3_600_000));
  }

  /**
   * A job published nudges the daemons of this host through their heartbeat's wake_port (docs/spool-protocol.md,
   * section 6b): a connection to that port of the loopback interface; heartbeats of another host, of a stopping
   * daemon or without a usable port are passed over, and a port nobody listens on is no error.
   */
  @Test
  void publishingAJobNudgesTheListeningDaemonsOfThisHost() throws Exception {
    String here = java.net.InetAddress.getLocalHost().getHostName();
    java.net.InetAddress loopback = java.net.InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
    try (java.net.ServerSocket listening = new java.net.ServerSocket(0, 16, loopback);
      java.net.ServerSocket other = new java.net.ServerSocket(0, 16, loopback)) {
      listening.setSoTimeout(20000);
      other.setSoTimeout(300);
      int dead;
      try (java.net.ServerSocket closed = new java.net.ServerSocket(0, 1, loopback)) {
        dead = closed.getLocalPort();
      }
      Path daemons = m_Spool.resolve("daemons");
      Files.write(daemons.resolve("fake.json"), ("{\"host\":" + Json.write(here) + ",\"wake_port\":"
        + listening.getLocalPort() + ",\"state\":\"running\"}").getBytes(StandardCharsets.UTF_8));
      Files.write(daemons.resolve("elsewhere.json"), ("{\"host\":\"not-" + here + "-at-all\",\"wake_port\":"
        + other.getLocalPort() + "}").getBytes(StandardCharsets.UTF_8));
      Files.write(daemons.resolve("stopping.json"), ("{\"host\":" + Json.write(here) + ",\"wake_port\":"
        + other.getLocalPort() + ",\"state\":\"stopping\"}").getBytes(StandardCharsets.UTF_8));
      Files.write(daemons.resolve("text.json"), ("{\"host\":" + Json.write(here) + ",\"wake_port\":\""
        + other.getLocalPort() + "\"}").getBytes(StandardCharsets.UTF_8));
      Files.write(daemons.resolve("dead.json"), ("{\"host\":" + Json.write(here) + ",\"wake_port\":" + dead + "}")
        .getBytes(StandardCharsets.UTF_8));
      Files.write(daemons.resolve("garbage.json"), "{not json".getBytes(StandardCharsets.UTF_8));
      SpoolClient c = client(0);
      long end = System.currentTimeMillis() + 20000;
      while (!Spool.hostKnown() && System.currentTimeMillis() < end) {
        Thread.sleep(10); // the host's name is looked up on a thread of its own
      }
      Map<String, Object> params = new LinkedHashMap<>();
      params.put("structure", "nb");
      c.publish(weather(), params);
      try (java.net.Socket nudge = listening.accept()) {
        assertEquals(-1, nudge.getInputStream().read(), "a nudge carries no data and is closed at once");
      }
      assertThrows(java.net.SocketTimeoutException.class, () -> other.accept().close(),
        "another host's, a stopping daemon's or a text port was nudged");
      assertEquals(1, Spool.wake(m_Spool)); // the listening daemon only, again
      listening.accept().close();
      assertEquals(0, Spool.wake(m_Spool.resolve("no-such-spool")));
    }
  }

  /** The log gets a finished job's warnings and the members its SkDB shrank to stay within their cell cap. */
  @Test
  void theResultsWarningsAndCellCapGoToTheLog() throws Exception {
    Object golden = Json.parse(new String(Files.readAllBytes(SpoolGoldenTest.spoolGolden().resolve("result.json")),
      StandardCharsets.UTF_8));
    assertEquals(List.of(), SpoolClient.resultNotes(golden));
    Object capped = Json.parse("{\"warnings\":[\"an ID-like attribute\"],\"structure\":{\"members\":20,"
      + "\"cell_limited\":[{\"member\":0,\"n_star\":15,\"k_star\":3,\"cells\":2079,\"max_cells\":300},"
      + "{\"member\":3,\"n_star\":16,\"k_star\":2,\"cells\":1041,\"max_cells\":300}]}}");
    assertEquals(List.of("warning: an ID-like attribute", "note: 2 of 20 members took a smaller model than their best, "
      + "to stay within 300 table cells each: members 0, 3 (the classifier's output says more)"),
      SpoolClient.resultNotes(capped));
    assertEquals(List.of(), SpoolClient.resultNotes(null));
  }

  @Test
  void aModelComesBack() throws Exception {
    SpoolClient c = client(0);
    Future<Path> f = train(c);
    Path job = claim();
    String name = job.getFileName().toString();
    Files.write(m_Spool.resolve("progress").resolve(name + ".json"),
      "{\"protocol\":1,\"phase\":\"sampling\",\"iteration\":5,\"total\":50,\"attempt\":1}".getBytes(
        StandardCharsets.UTF_8));
    Files.copy(TestFiles.golden().resolve("weather-kdb1-hdp.hdpbnc"), job.resolve("model.arrow"));
    Files.write(job.resolve("result.json"), ("{\"protocol\":1,\"job\":\"" + name + "\",\"status\":\"done\","
      + "\"warnings\":[\"a warning\"]}").getBytes(StandardCharsets.UTF_8));
    Files.move(job, m_Spool.resolve("done").resolve(name), StandardCopyOption.ATOMIC_MOVE);
    Path model = f.get(20, TimeUnit.SECONDS);
    assertEquals(m_Spool.resolve("done").resolve(name).resolve("model.arrow"), model);
    HDPModel m = ModelFile.read(model);
    assertEquals(2, m.numClasses());
    c.cleanUp();
    assertTrue(!Files.exists(m_Spool.resolve("done").resolve(name)), "the client removes its finished job");
    try (Stream<Path> s = Files.list(m_Spool.resolve("cancel"))) {
      assertEquals(0, s.count(), "a finished job is not cancelled");
    }
  }

  /**
   * Weka's Stop (Thread.stop) can end the training thread after train() returned and before cleanUp() removed
   * the finished job, or half-way through that removal: the job's monitor removes it then.
   */
  @Test
  void aFinishedJobLeftByAStoppedCallerIsRemovedByItsMonitor() throws Exception {
    SpoolClient c = client(0);
    java.util.concurrent.atomic.AtomicReference<Path> got = new java.util.concurrent.atomic.AtomicReference<>();
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("structure", "kdb");
    Thread caller = new Thread(() -> {
      try {
        got.set(c.train(weather(), params)); // and then it ends, without cleanUp()
      } catch (Exception e) {
        // the assertion below says it
      }
    }, "a training thread that is stopped");
    caller.start();
    Path job = claim();
    String name = job.getFileName().toString();
    Files.copy(TestFiles.golden().resolve("weather-kdb1-hdp.hdpbnc"), job.resolve("model.arrow"));
    Files.write(job.resolve("result.json"), ("{\"protocol\":1,\"job\":\"" + name + "\",\"status\":\"done\"}")
      .getBytes(StandardCharsets.UTF_8));
    Files.move(job, m_Spool.resolve("done").resolve(name), StandardCopyOption.ATOMIC_MOVE);
    caller.join(20000);
    assertEquals(m_Spool.resolve("done").resolve(name).resolve("model.arrow"), got.get());
    Path done = m_Spool.resolve("done").resolve(name);
    long end = System.currentTimeMillis() + 10000;
    while (Files.exists(done) && System.currentTimeMillis() < end) {
      Thread.sleep(50);
    }
    assertTrue(!Files.exists(done), "the finished job stays in done/ after its caller left without cleanUp()");
  }

  /**
   * Weka's Stop in the Experimenter and the SimpleCLI is a Thread.stop() with no interrupt first, and the
   * caller's thread lives on afterwards: the job is cancelled all the same.
   */
  @Test
  @SuppressWarnings({"deprecation", "removal"})
  void aStopWithoutAnInterruptCancelsTheJobWhileTheCallerLivesOn() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() < 20, "Thread.stop() is unsupported");
    SpoolClient c = client(0);
    java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch end = new java.util.concurrent.CountDownLatch(1);
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("structure", "kdb");
    Thread caller = new Thread(() -> {
      try {
        c.train(weather(), params);
      } catch (ThreadDeath e) {
        stopped.countDown();
      } catch (Exception e) {
        // the assertion below says it
      }
      while (end.getCount() > 0) { // alive, as the Experimenter's thread after a Stop
        try {
          end.await();
        } catch (InterruptedException e) {
          // Thread.stop() also interrupts the thread it stops
        }
      }
    }, "a training thread that is stopped and lives on");
    caller.start();
    Path job = claim();
    while (c.monitor() == null || caller.getState() != Thread.State.TIMED_WAITING) {
      Thread.sleep(1); // until it waits for the job, as a training does for most of its time
    }
    caller.stop();
    try {
      assertTrue(stopped.await(20, TimeUnit.SECONDS), "train() did not end by the stop");
      Path marker = m_Spool.resolve("cancel").resolve(job.getFileName().toString());
      long deadline = System.currentTimeMillis() + 20000;
      while (!Files.exists(marker) && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      assertTrue(Files.exists(marker), "no cancel marker");
      answerCancels(); // the job to failed/, cancelled: the monitor, which saw the caller go, removes it
      Path failed = m_Spool.resolve("failed").resolve(job.getFileName().toString());
      while (Files.exists(failed) && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      assertTrue(!Files.exists(failed), "the monitor left the cancelled job in failed/");
      assertTrue(caller.isAlive());
    } finally {
      end.countDown();
    }
  }

  @Test
  void aFailedJobGivesTheDaemonsMessage() throws Exception {
    Future<Path> f = train(client(0));
    Path job = claim();
    String name = job.getFileName().toString();
    Files.copy(SpoolGoldenTest.spoolGolden().resolve("error").resolve("corrupt-arff.json"), job.resolve("error.json"));
    Files.move(job, m_Spool.resolve("failed").resolve(name), StandardCopyOption.ATOMIC_MOVE);
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
    String msg = e.getCause().getMessage();
    assertTrue(msg.contains("value list of attribute 'a' has no closing '}'") && msg.contains("[bad_data]"), msg);
    assertTrue(!Files.exists(m_Spool.resolve("failed").resolve(name)), "the client removes its failed job");
  }

  @Test
  void aDeadDaemonIsNoticed() throws Exception {
    Future<Path> f = train(client(0));
    Path job = claim();
    m_Lock.release(); // the fake daemon dies with the job claimed
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
    String msg = e.getCause().getMessage();
    assertTrue(msg.contains("the hdp-bnc daemon fake died while training job " + job.getFileName()), msg);
    assertTrue(Files.exists(m_Spool.resolve("cancel").resolve(job.getFileName().toString())));
  }

  @Test
  void noDaemonLeftForAQueuedJob() throws Exception {
    m_Lock.release();
    SpoolClient c = client(0);
    Exception e = assertThrows(Exception.class, () -> c.train(weather(), new LinkedHashMap<>()));
    assertTrue(e.getMessage().contains("no hdp-bnc daemon is running"), e.getMessage());
  }

  @Test
  void anUnwritableSpoolSaysWhatToChange() throws Exception {
    Path file = m_Spool.resolve("a-file");
    Files.write(file, new byte[0]);
    SpoolClient c = new SpoolClient(file.resolve("spool"), "python3", true, 0, false);
    Exception e = assertThrows(Exception.class, () -> c.train(weather(), new LinkedHashMap<>()));
    assertTrue(e.getMessage().contains("cannot write the training job into the spool directory"), e.getMessage());
    assertTrue(e.getMessage().contains("-spool"), e.getMessage());
  }

  @Test
  void aDaemonOnAnotherHostIsJudgedByItsHeartbeat() throws Exception {
    Path beat = m_Spool.resolve("daemons").resolve("remote.json");
    double now = System.currentTimeMillis() / 1000.0;
    Files.write(beat, ("{\"protocol\":1,\"daemon\":\"remote\",\"host\":\"some-other-host.example\","
      + "\"heartbeat_unix\":" + now + ",\"heartbeat_seconds\":2.0}").getBytes(StandardCharsets.UTF_8));
    assertTrue(Spool.alive(m_Spool, "remote"), "a fresh heartbeat from another host");
    Files.write(beat, ("{\"protocol\":1,\"daemon\":\"remote\",\"host\":\"some-other-host.example\","
      + "\"heartbeat_unix\":" + (now - 60) + ",\"heartbeat_seconds\":2.0}").getBytes(StandardCharsets.UTF_8));
    assertTrue(!Spool.alive(m_Spool, "remote"), "a stale heartbeat");
    Files.write(beat, ("{\"protocol\":1,\"daemon\":\"remote\",\"host\":\""
      + java.net.InetAddress.getLocalHost().getHostName() + "\",\"heartbeat_unix\":" + now + "}").getBytes(
        StandardCharsets.UTF_8));
    assertTrue(!Spool.alive(m_Spool, "remote"), "on this host only the lock counts");
    assertTrue(Spool.alive(m_Spool, "fake"), "the fake daemon holds its lock");
  }

  @Test
  void timeoutCancels() throws Exception {
    SpoolClient c = client(1); // the fake daemon never claims
    Exception e = assertThrows(Exception.class, () -> c.train(weather(), new LinkedHashMap<>()));
    assertTrue(e.getMessage().contains("did not finish within the timeout of 1 s"), e.getMessage());
    assertTrue(Files.exists(m_Spool.resolve("cancel").resolve(c.jobName())));
  }

  @Test
  void interruptionCancels() throws Exception {
    SpoolClient c = client(0);
    Future<Path> f = train(c);
    Path job = claim();
    f.cancel(true); // interrupts the waiting thread
    long end = System.currentTimeMillis() + 20000;
    Path marker = m_Spool.resolve("cancel").resolve(job.getFileName().toString());
    while (!Files.exists(marker) && System.currentTimeMillis() < end) {
      Thread.sleep(20);
    }
    assertTrue(Files.exists(marker), "no cancel marker");
  }

  @Test
  void cancelledWekaJobsAreSweptAtTheNextPublish() throws Exception {
    Path old = m_Spool.resolve("failed").resolve("weka-20260101T000000Z-1-00000000");
    Path other = m_Spool.resolve("failed").resolve("shell-job");
    Path failedWeka = m_Spool.resolve("failed").resolve("weka-20260101T000000Z-1-00000001");
    for (Path p : new Path[] {old, other, failedWeka}) {
      Files.createDirectories(p);
    }
    Files.copy(SpoolGoldenTest.spoolGolden().resolve("error").resolve("cancelled.json"), old.resolve("error.json"));
    Files.copy(SpoolGoldenTest.spoolGolden().resolve("error").resolve("cancelled.json"), other.resolve("error.json"));
    Files.copy(SpoolGoldenTest.spoolGolden().resolve("error").resolve("corrupt-arff.json"),
      failedWeka.resolve("error.json"));
    Path recent = m_Spool.resolve("failed").resolve("weka-20260101T000000Z-1-00000002");
    Files.createDirectories(recent);
    Files.copy(SpoolGoldenTest.spoolGolden().resolve("error").resolve("cancelled.json"), recent.resolve("error.json"));
    java.nio.file.attribute.FileTime hourAgo = java.nio.file.attribute.FileTime.fromMillis(
      System.currentTimeMillis() - 3600_000);
    for (Path p : new Path[] {old, other, failedWeka}) {
      Files.setLastModifiedTime(p, hourAgo);
    }
    client(0).publish(weather(), new LinkedHashMap<>());
    assertTrue(!Files.exists(old), "a cancelled Weka job is swept");
    assertTrue(Files.exists(recent), "a minute of grace");
    assertTrue(Files.exists(other), "other clients' jobs are left alone");
    assertTrue(Files.exists(failedWeka), "jobs that failed for other reasons are left alone");
  }

  @Test
  void aVanishedJobIsAnError() throws Exception {
    Future<Path> f = train(client(0));
    Path job = claim();
    Spool.deleteTree(job);
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
    assertInstanceOf(Exception.class, e.getCause());
    assertTrue(e.getCause().getMessage().contains("vanished"), e.getCause().getMessage());
  }

  @Test
  void theJobCarriesTheData() throws Exception {
    SpoolClient c = client(0);
    c.setArff(true);
    Future<Path> f = train(c);
    Path job = claim();
    Instances back = DataSource.read(job.resolve("data.arff").toString());
    back.setClassIndex(back.numAttributes() - 1);
    Instances d = weather();
    assertEquals(d.numInstances(), back.numInstances());
    for (int i = 0; i < d.numInstances(); i++) {
      assertArrayEquals(d.instance(i).toDoubleArray(), back.instance(i).toDoubleArray(), 0.0);
    }
    f.cancel(true);
  }
}
