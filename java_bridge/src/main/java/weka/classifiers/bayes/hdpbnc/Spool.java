/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * The primitives of the hdp-bnc spool protocol, version 1 ({@code docs/spool-protocol.md},
 * {@code hdp_plugin/daemon/protocol.py}): the spool's folders, atomic writes, the daemons' locks and
 * heartbeats, reading documents, and removing what a client leaves.
 *
 * <p>A job is built in {@code tmp/<job>/} and published with one atomic rename into {@code new/<job>}; the
 * daemon claims it into {@code claimed/<daemon>/<job>} and finishes it in {@code done/<job>} or
 * {@code failed/<job>}. A daemon is alive while it holds the lock on byte 0 of {@code daemons/<id>.lock};
 * cancelling is writing the marker {@code cancel/<job>}.
 */
public final class Spool {

  /** The protocol version spoken. */
  public static final int PROTOCOL = 1;
  static final String[] SUBDIRS = {"tmp", "new", "claimed", "done", "failed", "progress", "cancel", "daemons"};
  /** The longest wait for the loopback connection that nudges a daemon (the daemon's config.WAKE_CONNECT_SECONDS). */
  static final int WAKE_CONNECT_MILLIS = 200;
  /** The largest heartbeat read for its wake-up port (the daemon's documents are a few hundred bytes). */
  static final long MAX_HEARTBEAT_BYTES = 1 << 20;

  private Spool() {
  }

  /**
   * Creates the spool and its sub-directories, private to the user where the file system allows.
   *
   * @param root the spool
   * @throws IOException if it cannot be created
   */
  public static void create(Path root) throws IOException {
    FileAttribute<?>[] attrs = FileSystems.getDefault().supportedFileAttributeViews().contains("posix")
      ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"))}
      : new FileAttribute<?>[0];
    if (!Files.isDirectory(root)) {
      Files.createDirectories(root, attrs);
    }
    for (String d : SUBDIRS) {
      Path p = root.resolve(d);
      if (!Files.isDirectory(p)) {
        try {
          Files.createDirectory(p, attrs);
        } catch (FileAlreadyExistsException e) {
          // another producer or the daemon made it
        }
      }
    }
  }

  /**
   * Is the daemon that owns this lock file alive? Answered by trying its lock (byte 0, exclusive), as
   * {@code daemon_alive} in protocol.py.
   *
   * @param lock {@code daemons/<id>.lock}
   * @return true if a process holds the lock
   */
  static boolean lockHeld(Path lock) {
    try (FileChannel ch = FileChannel.open(lock, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      FileLock l = ch.tryLock(0, 1, false);
      if (l == null) {
        return true;
      }
      l.release();
      return false;
    } catch (NoSuchFileException e) {
      return false;
    } catch (OverlappingFileLockException | IOException e) {
      return true; // held by this JVM, or cannot tell: assume alive, as protocol.py does
    }
  }

  /**
   * Is daemon {@code id} alive? Its lock says so (section 6); for a daemon on another host, whose
   * lock may not be visible through a network file system, a heartbeat younger than five intervals.
   *
   * @param root the spool
   * @param id the daemon's id
   * @return true if alive
   */
  static boolean alive(Path root, String id) {
    if (lockHeld(root.resolve("daemons").resolve(id + ".lock"))) {
      return true;
    }
    Object beat = heartbeat(root, id);
    if (!(beat instanceof Map)) {
      return false;
    }
    Map<?, ?> h = (Map<?, ?>) beat;
    if (onHost(h, localHost())) {
      return false; // on this host the lock is the truth
    }
    Object at = h.get("heartbeat_unix");
    Object every = h.get("heartbeat_seconds");
    double interval = every instanceof Number ? ((Number) every).doubleValue() : 2.0;
    return at instanceof Number
      && System.currentTimeMillis() / 1000.0 - ((Number) at).doubleValue() < 5 * interval;
  }

  /** @return the heartbeat document of daemon {@code id}, or null */
  static Object heartbeat(Path root, String id) {
    return readJson(root.resolve("daemons").resolve(id + ".json"));
  }

  /** @return true if a heartbeat document has no host's name, or names {@code host} (compared without domains) */
  static boolean onHost(Map<?, ?> heartbeat, String host) {
    Object h = heartbeat.get("host");
    return !(h instanceof String) || shortHost((String) h).equalsIgnoreCase(shortHost(host));
  }

  private static String shortHost(String host) {
    int dot = host.indexOf('.');
    return dot < 0 ? host : host.substring(0, dot);
  }

  static String localHost() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "";
    }
  }

  /** This host's name for {@link #wake}, once looked up (null until then). */
  private static volatile String s_LocalHost;
  private static final AtomicBoolean s_HostLookup = new AtomicBoolean();

  /** @return true once this host's name is known ({@link #lookUpHost}) */
  static boolean hostKnown() {
    return s_LocalHost != null;
  }

  /**
   * Looks up this host's name once per JVM, on a thread of its own: {@code InetAddress.getLocalHost()} asks
   * the name service, which takes seconds on some machines (macOS without its name in /etc/hosts), and no
   * job waits for it.
   */
  static void lookUpHost() {
    if (s_HostLookup.compareAndSet(false, true)) {
      Thread t = new Thread(() -> s_LocalHost = localHost(), "HDPBayesNet host name");
      t.setDaemon(true);
      t.start();
    }
  }

  /**
   * Nudges the daemons of this host that serve the spool and listen for it (docs/spool-protocol.md, section
   * 6b): for every heartbeat with a {@code wake_port} and this host's name, a connection to that port of the
   * loopback interface, closed at once. The daemon then looks at {@code new/} at once instead of at its next
   * poll. Never fails and never waits for the host's name ({@link #lookUpHost}: none is nudged until it is
   * known): a daemon not reached finds the job at its next look.
   *
   * @param root the spool
   * @return how many daemons were reached
   */
  static int wake(Path root) {
    lookUpHost();
    String here = s_LocalHost;
    if (here == null) {
      return 0;
    }
    int reached = 0;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(root.resolve("daemons"), "*.json")) {
      for (Path p : ds) {
        if (p.getFileName().toString().startsWith(".") || !Files.isRegularFile(p)
          || Files.size(p) > MAX_HEARTBEAT_BYTES) {
          continue; // not a heartbeat (a FIFO would block the read)
        }
        Object beat = readJson(p);
        if (!(beat instanceof Map)) {
          continue;
        }
        Map<?, ?> h = (Map<?, ?>) beat;
        Object port = h.get("wake_port");
        if (!(port instanceof Long) || ((Long) port) < 1 || ((Long) port) > 65535 || !(h.get("host") instanceof String)
          || "stopping".equals(h.get("state")) || !onHost(h, here)) {
          continue;
        }
        try (Socket s = new Socket()) {
          // 127.0.0.1, where the daemon listens, even where Java would prefer IPv6's ::1 as the loopback address
          InetAddress loopback = InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
          s.connect(new InetSocketAddress(loopback, ((Long) port).intValue()), WAKE_CONNECT_MILLIS);
          reached++;
        } catch (IOException e) {
          // not listening (any more): polling finds the job
        }
      }
    } catch (IOException | RuntimeException e) {
      // no daemons/ to read: nothing to nudge
    }
    return reached;
  }

  /**
   * The ids of the live daemons of a spool.
   *
   * @param root the spool
   * @return the ids (possibly empty)
   */
  public static List<String> liveDaemons(Path root) {
    List<String> out = new ArrayList<>();
    Path dir = root.resolve("daemons");
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.lock")) {
      for (Path p : ds) {
        String f = p.getFileName().toString();
        String id = f.substring(0, f.length() - ".lock".length());
        if (!f.startsWith(".") && alive(root, id)) {
          out.add(id);
        }
      }
    } catch (IOException e) {
      // an unreadable daemons/ means no daemon we can see
    }
    return out;
  }

  /** Asks daemon {@code id} to stop: the {@code daemons/<id>.stop} marker (it puts its unfinished jobs back). */
  static void askToStop(Path root, String id) throws IOException {
    writeAtomic(root.resolve("daemons").resolve(id + ".stop"), new byte[0]);
  }

  /**
   * Asks every live daemon of a spool to stop and waits for them to go.
   *
   * @param root the spool
   * @param waitMillis how long to wait
   * @return true if no daemon is alive at the end
   * @throws IOException if a marker cannot be written
   * @throws InterruptedException if interrupted while waiting
   */
  public static boolean stopDaemons(Path root, long waitMillis) throws IOException, InterruptedException {
    for (String id : liveDaemons(root)) {
      askToStop(root, id);
    }
    long end = System.currentTimeMillis() + waitMillis;
    while (!liveDaemons(root).isEmpty()) {
      if (System.currentTimeMillis() > end) {
        return false;
      }
      Thread.sleep(100);
    }
    return true;
  }

  /**
   * Writes a file whole or not at all: a temporary sibling (its name starts with a dot, which the daemon
   * passes over), forced to disk, then renamed over the target.
   */
  static void writeAtomic(Path target, byte[] data) throws IOException {
    Path tmp = target.resolveSibling("." + target.getFileName() + "." + ProcessHandle.current().pid() + "."
      + System.nanoTime() + ".tmp");
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ch.write(ByteBuffer.wrap(data));
        ch.force(true);
      }
      try {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /**
   * Removes the folders of Weka jobs that failed because their client cancelled them: the client
   * stopped waiting when it cancelled, so nobody else will read them (the daemon never deletes). Only
   * folders older than a minute go, so that a client still waiting on a job someone else cancelled
   * reads its error first.
   *
   * @param root the spool
   */
  static void sweepCancelled(Path root) {
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(root.resolve("failed"), "weka-*")) {
      for (Path job : ds) {
        long age = System.currentTimeMillis() - Files.getLastModifiedTime(job).toMillis();
        if (age > 60_000 && cancelled(readJson(job.resolve("error.json")))) {
          deleteTree(job);
        }
      }
    } catch (IOException e) {
      // housekeeping only
    }
  }

  /** @return true if an error document says the job was cancelled */
  static boolean cancelled(Object error) {
    return error instanceof Map && "cancelled".equals(((Map<?, ?>) error).get("code"));
  }

  /** @return the JSON document in a file, or null if it is missing or not (yet) whole */
  static Object readJson(Path p) {
    try {
      return Json.parse(new String(Files.readAllBytes(p), StandardCharsets.UTF_8));
    } catch (IOException | IllegalArgumentException e) {
      return null; // missing, or being replaced
    }
  }

  /** @return a new job's name: {@code weka-<UTC time>-<pid>-<8 random hex digits>} */
  static String newJobName() {
    String utc = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'", Locale.ROOT).withZone(ZoneOffset.UTC)
      .format(Instant.now());
    String random = String.format("%08x", new SecureRandom().nextInt());
    return "weka-" + utc + "-" + ProcessHandle.current().pid() + "-" + random;
  }

  /** @return true if job {@code name} is in done/ or failed/ */
  static boolean finished(Path root, String name) {
    return Files.isDirectory(root.resolve("done").resolve(name))
      || Files.isDirectory(root.resolve("failed").resolve(name));
  }

  /** @return the id of the daemon whose claimed/ folder holds the job, or null */
  static String claimedBy(Path root, String name) throws IOException {
    Path claimed = root.resolve("claimed");
    if (!Files.isDirectory(claimed)) {
      return null;
    }
    try (Stream<Path> s = Files.list(claimed)) {
      return s.filter(d -> Files.isDirectory(d.resolve(name))).map(d -> d.getFileName().toString()).findFirst()
        .orElse(null);
    }
  }

  /** Removes a file or folder and what it holds, as far as it can. */
  static void deleteTree(Path p) {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      s.sorted(Comparator.reverseOrder()).forEach(q -> {
        try {
          Files.deleteIfExists(q);
        } catch (IOException e) {
          // best effort
        }
      });
    } catch (IOException e) {
      // best effort
    }
  }

  /** @return the last lines of a text file, or "" if it cannot be read */
  static String tail(Path p, int lines) {
    try {
      List<String> all = Files.readAllLines(p, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }
}
