/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import weka.classifiers.bayes.hdpbnc.ArrowFileReader.Column;
import weka.classifiers.bayes.hdpbnc.ArrowFileReader.ColumnType;

/**
 * Reads the hdp-bnc model file that {@code hdp_plugin/model/modelfile.py} writes (see
 * {@code docs/model-format.md}): an Arrow IPC file with one row per cell (a tree node and a value of
 * the tree's attribute) and one record batch per tree, in the columns tree, node, parent, depth,
 * branch, value (int32), count (int64), log_prob (float64), group (int32), concentration (float64);
 * and a JSON model document in the schema metadata under {@code hdp_plugin.model}. The file's
 * SHA-256 ({@code hdp_plugin.sha256}) over both JSON documents and every column is verified, so a
 * corrupted file is an error, never a wrong answer.
 */
public final class ModelFile {

  /** The model document's {@code format}. */
  public static final String FORMAT_NAME = "hdp-bnc-model";
  /**
   * The newest major version of the format this reader reads (any minor): 1 is one network, 2 an
   * ensemble of weighted member networks (both one row per cell), 3 either in a node table (one row per
   * node, its cells as two lists; an ensemble has {@code members}).
   */
  public static final int FORMAT_MAJOR = 3;
  /** The oldest major version this reader reads. */
  public static final int FORMAT_MAJOR_OLDEST = 1;

  static final String MODEL_KEY = "hdp_plugin.model";
  static final String TRAINING_KEY = "hdp_plugin.training";
  static final String CHECKSUM_KEY = "hdp_plugin.sha256";

  static final String[] COLUMNS = {"tree", "node", "parent", "depth", "branch", "value", "count", "log_prob",
    "group", "concentration"};
  static final ColumnType[] TYPES = {ColumnType.INT32, ColumnType.INT32, ColumnType.INT32, ColumnType.INT32,
    ColumnType.INT32, ColumnType.INT32, ColumnType.INT64, ColumnType.FLOAT64, ColumnType.INT32,
    ColumnType.FLOAT64};
  /** The node table of format 3.0: per-node fields, then each node's cells as lists. */
  static final String[] NODE_COLUMNS = {"parent", "depth", "branch", "group", "concentration", "count", "log_prob"};
  static final ColumnType[] NODE_TYPES = {ColumnType.INT32, ColumnType.INT32, ColumnType.INT32, ColumnType.INT32,
    ColumnType.FLOAT64, ColumnType.LIST_INT64, ColumnType.LIST_FLOAT64};

  private ModelFile() {
  }

  /** A model file that cannot be read; the message names the file. */
  public static final class ModelFileException extends IOException {
    private static final long serialVersionUID = -2769023371850357271L;

    ModelFileException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Internal: a consistency check failed. */
  private static final class Corrupt extends Exception {
    private static final long serialVersionUID = 1L;

    Corrupt(String what) {
      super(what);
    }
  }

  private static void need(boolean cond, String what) throws Corrupt {
    if (!cond) {
      throw new Corrupt(what);
    }
  }

  /**
   * Reads and verifies a model file.
   *
   * @param path the file
   * @return the model
   * @throws ModelFileException for a missing, truncated, corrupted or foreign file, or one of a newer
   *           major format version; the message names the file
   */
  public static HDPModel read(Path path) throws ModelFileException {
    return read(path, MAX_FILE_BYTES);
  }

  /**
   * The largest model file read: a Java array (and so a file read into one) holds less than 2 GiB.
   * hdp_plugin refuses to train models whose file would come near it (config.MAX_MODEL_CELLS).
   */
  public static final long MAX_FILE_BYTES = Integer.MAX_VALUE - 16;

  static HDPModel read(Path path, long maxBytes) throws ModelFileException {
    long size;
    try {
      size = Files.size(path);
    } catch (IOException e) {
      throw new ModelFileException(path + ": cannot read the model file: " + e, e);
    }
    if (size > maxBytes) {
      throw new ModelFileException(path + ": the model file has " + size + " bytes, more than the " + maxBytes
        + " this reader can hold; train a smaller model (a lower k, fewer attributes or fewer values)", null);
    }
    byte[] data;
    try {
      data = Files.readAllBytes(path);
    } catch (IOException e) {
      throw new ModelFileException(path + ": cannot read the model file: " + e, e);
    } catch (OutOfMemoryError e) {
      throw tooBigForHeap(path, size);
    }
    try {
      return read(data, path.toString());
    } catch (OutOfMemoryError e) {
      data = null;
      throw tooBigForHeap(path, size);
    }
  }

  private static ModelFileException tooBigForHeap(Path path, long size) {
    return new ModelFileException(path + ": the model file (" + size + " bytes) does not fit in this Java "
      + "heap (" + Runtime.getRuntime().maxMemory() + " bytes at most); give Java more memory (-Xmx) or train a "
      + "smaller model", null);
  }

  /**
   * Reads and verifies a model file held in memory.
   *
   * @param data the bytes
   * @param source the name used in messages
   * @return the model
   * @throws ModelFileException if the bytes are not a valid model file
   */
  public static HDPModel read(byte[] data, String source) throws ModelFileException {
    ArrowFileReader reader;
    try {
      reader = new ArrowFileReader(data);
    } catch (IOException e) {
      throw new ModelFileException(source + ": not an hdp-bnc model file (" + e.getMessage() + ")", e);
    }
    Map<String, byte[]> meta = reader.metadata();
    byte[] modelJson = meta.get(MODEL_KEY);
    if (modelJson == null) {
      throw new ModelFileException(source + ": an Arrow file, but not an hdp-bnc model file (no " + MODEL_KEY
        + " metadata)", null);
    }
    byte[] trainingJson = meta.containsKey(TRAINING_KEY) ? meta.get(TRAINING_KEY)
      : "{}".getBytes(StandardCharsets.UTF_8);
    Map<String, Object> doc;
    Object training;
    try { // strictly UTF-8, as hdp_plugin reads them: both readers refuse the same files
      Object parsed = Json.parseUtf8(modelJson);
      training = Json.parseUtf8(trainingJson);
      if (!(parsed instanceof Map)) {
        throw new IllegalArgumentException("not an object");
      }
      doc = asMap(parsed);
    } catch (IllegalArgumentException e) {
      throw new ModelFileException(source + ": corrupted model file (unreadable model metadata)", e);
    }
    if (!(training instanceof Map)) {
      throw new ModelFileException(source + ": corrupted model file (the training metadata is not an object)", null);
    }
    if (!FORMAT_NAME.equals(doc.get("format"))) {
      throw new ModelFileException(source + ": an Arrow file, but not an hdp-bnc model file (format "
        + doc.get("format") + ")", null);
    }
    Object version = doc.get("format_version");
    if (!(version instanceof List) || ((List<?>) version).size() != 2
      || !(((List<?>) version).get(0) instanceof Long) || !(((List<?>) version).get(1) instanceof Long)) {
      throw new ModelFileException(source + ": corrupted model file (bad format_version " + version + ")", null);
    }
    long major = (Long) ((List<?>) version).get(0);
    long minor = (Long) ((List<?>) version).get(1);
    if (major < FORMAT_MAJOR_OLDEST || major > FORMAT_MAJOR) {
      throw new ModelFileException(source + ": model format " + major + "." + minor
        + (major > FORMAT_MAJOR ? " is newer than this Weka package reads (up to " + FORMAT_MAJOR
          + ".x); upgrade the HDPBayesNet package" : " is not supported (this package reads "
            + FORMAT_MAJOR_OLDEST + ".x to " + FORMAT_MAJOR + ".x)"), null);
    }
    boolean nodeTable = major >= 3;
    if (!reader.fieldNames().equals(Arrays.asList(nodeTable ? NODE_COLUMNS : COLUMNS))
      || !reader.fieldTypes().equals(Arrays.asList(nodeTable ? NODE_TYPES : TYPES))) {
      throw new ModelFileException(source + ": corrupted model file (unexpected columns " + reader.fieldNames()
        + ")", null);
    }
    List<List<Column>> batches = new ArrayList<>();
    try {
      for (int i = 0; i < reader.numBatches(); i++) {
        List<Column> b = reader.readBatch(i, false); // the values one tree at a time, when building
        for (Column c : b) {
          if (c.nullCount() > 0) {
            throw new ModelFileException(source + ": corrupted model file (nulls in column '" + c.name + "')", null);
          }
        }
        batches.add(b);
      }
    } catch (ModelFileException e) {
      throw e;
    } catch (IOException e) {
      throw new ModelFileException(source + ": corrupted model file (" + e.getMessage() + ")", e);
    }
    String expected = meta.containsKey(CHECKSUM_KEY) ? new String(meta.get(CHECKSUM_KEY), StandardCharsets.US_ASCII)
      : "";
    if (!expected.equals(digest(modelJson, trainingJson, batches))) {
      throw new ModelFileException(source + ": corrupted model file (checksum mismatch)", null);
    }
    try {
      return major == 2 || (nodeTable && doc.containsKey("members")) ? buildEnsemble(doc, batches)
        : build(doc, batches);
    } catch (Corrupt e) {
      throw new ModelFileException(source + ": corrupted model file (" + e.getMessage() + ")", e);
    } catch (RuntimeException e) { // missing keys, wrong JSON types, indices out of range
      throw new ModelFileException(source + ": corrupted model file (bad model metadata: " + e + ")", e);
    }
  }

  /**
   * SHA-256 of the two JSON documents, then of every column of every batch, little-endian (a list column:
   * its int32 offsets, then its items).
   */
  static String digest(byte[] modelJson, byte[] trainingJson, List<List<Column>> batches) {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    md.update(modelJson);
    md.update(trainingJson);
    for (List<Column> cols : batches) {
      for (Column c : cols) {
        if (c.raw == null) { // only fixed-width columns are hashed (the schema is checked before)
          throw new IllegalStateException("unexpected column type " + c.type);
        }
        if (c.rawOffsets != null) {
          md.update(c.rawOffsets.duplicate());
        }
        md.update(c.raw.duplicate()); // the file's own little-endian bytes: no copy
      }
    }
    StringBuilder hex = new StringBuilder();
    for (byte x : md.digest()) {
      hex.append(String.format("%02x", x & 0xff));
    }
    return hex.toString();
  }

  // ------------------------------------------------------------------------------------------
  // JSON helpers
  // ------------------------------------------------------------------------------------------
  @SuppressWarnings("unchecked")
  static Map<String, Object> asMap(Object o) {
    if (!(o instanceof Map)) {
      throw new IllegalArgumentException("expected an object, got " + o);
    }
    return (Map<String, Object>) o;
  }

  static List<?> asList(Object o) {
    if (!(o instanceof List)) {
      throw new IllegalArgumentException("expected a list, got " + o);
    }
    return (List<?>) o;
  }

  static int asInt(Object o) {
    if (!(o instanceof Long) || (Long) o != (int) (long) (Long) o) {
      throw new IllegalArgumentException("expected an integer, got " + o);
    }
    return (int) (long) (Long) o;
  }

  static double asDouble(Object o) {
    if (!(o instanceof Number)) {
      throw new IllegalArgumentException("expected a number, got " + o);
    }
    return ((Number) o).doubleValue();
  }

  static int[] ints(Object o) {
    List<?> l = asList(o);
    int[] out = new int[l.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = asInt(l.get(i));
    }
    return out;
  }

  static String[] strings(Object o) {
    List<?> l = asList(o);
    String[] out = new String[l.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = String.valueOf(l.get(i));
    }
    return out;
  }

  // ------------------------------------------------------------------------------------------
  // building the model (the checks of _rebuild_trees in modelfile.py)
  // ------------------------------------------------------------------------------------------
  /**
   * An ensemble (format 2.0, or 3.0 with members): each member's network keys over the common keys, its
   * trees' batches in turn.
   */
  private static HDPModel buildEnsemble(Map<String, Object> doc, List<List<Column>> batches) throws Corrupt {
    List<?> parts = asList(doc.get("members"));
    need(!parts.isEmpty(), "an ensemble without members");
    int n = parts.size();
    Object ensemble = doc.get("ensemble");
    need(ensemble instanceof Map && "eskdb".equals(asMap(ensemble).get("kind")), "ensemble kind "
      + (ensemble instanceof Map ? asMap(ensemble).get("kind") : ensemble) + " is not eskdb");
    Object[][] counts = {{"ensemble.n_members", asMap(ensemble).get("n_members")},
      {"params.n_members", asMap(doc.get("params")).get("n_members")}};
    for (Object[] c : counts) {
      need(c[1] instanceof Long && (Long) c[1] == n, c[0] + " is " + c[1] + " but the file holds " + n + " members");
    }
    HDPModel[] members = new HDPModel[parts.size()];
    double[] weights = new double[parts.size()];
    int first = 0;
    for (int e = 0; e < members.length; e++) {
      Map<String, Object> part = asMap(parts.get(e));
      Map<String, Object> network = new java.util.HashMap<>(doc);
      network.putAll(part);
      network.put("seed", doc.get("seed")); // the seed the user gave, not the member's SeedSequence
      int nTrees = asList(part.get("trees")).size();
      need(first + nTrees <= batches.size(), "the number of trees does not match the structure");
      members[e] = build(network, batches.subList(first, first + nTrees));
      first += nTrees;
      Object w = part.get("weight");
      // what the writer writes: 1/n_members each (a weight of 1e308 would override the others, or sum to inf)
      need((w instanceof Long || w instanceof Double) && weightOk(((Number) w).doubleValue(), n), "member " + e
        + " has weight " + w + "; an ESKDB member weighs 1/n_members (" + (1.0 / n) + ")");
      weights[e] = ((Number) w).doubleValue();
      need(Arrays.equals(members[e].m_AttrNames, members[0].m_AttrNames)
        && Arrays.equals(members[e].m_AttrNumeric, members[0].m_AttrNumeric), "members disagree on the attributes");
    }
    need(first == batches.size(), "the number of trees does not match the structure");
    return HDPModel.ensemble(members, weights);
  }

  /** Is {@code w} the weight of one of {@code n} ESKDB members, 1/n (to 1e-9, relative)? */
  static boolean weightOk(double w, int n) {
    return !Double.isNaN(w) && !Double.isInfinite(w) && w > 0 && Math.abs(w * n - 1.0) <= 1e-9;
  }

  /**
   * A single network (format 1.0 or 3.0, or one member of an ensemble), in the steps the checks follow: the
   * attributes, the class, the structure, the trees' layout, the nodes and cells of every tree, and
   * finally the child tables that link each node to the context it refines.
   */
  private static HDPModel build(Map<String, Object> doc, List<List<Column>> batches) throws Corrupt {
    Attributes at = readAttributes(asList(doc.get("attributes")));
    int nAttr = at.names.length;
    Map<String, Object> cls = asMap(doc.get("class"));
    String className = String.valueOf(cls.get("name"));
    String[] classValues = strings(cls.get("values"));
    int nClasses = asInt(doc.get("n_classes"));
    need(nClasses == classValues.length && nClasses >= 1, "bad number of classes");
    int[] cards = readCardinalities(doc, at);
    double[] logPrior = readClassLogPrior(doc, nClasses);
    Map<String, Object> st = asMap(doc.get("structure"));
    int[] kept = ints(st.get("kept"));
    int[][] parents = readParents(st, nAttr);
    Layout lay = readLayout(asList(doc.get("trees")), batches, kept, cards, parents);
    Nodes nodes = readNodes(lay, batches, nClasses, cards);
    int[] childTable = linkChildren(nodes);
    Map<String, Object> est = asMap(doc.get("estimator"));
    String estName = String.valueOf(est.get("name"));
    return new HDPModel(at.names, at.values, at.numeric, at.cuts, className, classValues, cards, logPrior,
      String.valueOf(st.get("kind")), st.get("k") instanceof Long ? asInt(st.get("k")) : 0, kept, parents,
      lay.treeAttr, lay.treeCard, lay.treeNodeStart, lay.branching, nodes.parent, nodes.depth, nodes.branch,
      nodes.cellStart, nodes.childStart, childTable, nodes.logProbs, nodes.counts, nodes.concentration, estName,
      estimatorSummary(doc, est, estName), String.valueOf(doc.get("package_version")), fitRows(doc));
  }

  /** The attributes of a network: names, labels, which are numeric, and their cut points. */
  private static final class Attributes {
    String[] names;
    String[][] values;
    boolean[] numeric;
    double[][] cuts;
  }

  private static Attributes readAttributes(List<?> attrs) throws Corrupt {
    int nAttr = attrs.size();
    Attributes at = new Attributes();
    at.names = new String[nAttr];
    at.values = new String[nAttr][];
    at.numeric = new boolean[nAttr];
    at.cuts = new double[nAttr][];
    for (int a = 0; a < nAttr; a++) {
      Map<String, Object> ad = asMap(attrs.get(a));
      at.names[a] = String.valueOf(ad.get("name"));
      at.values[a] = strings(ad.get("values"));
      at.numeric[a] = Boolean.TRUE.equals(ad.get("numeric"));
      Object cp = ad.get("cut_points");
      if (cp != null) {
        List<?> l = asList(cp);
        at.cuts[a] = new double[l.size()];
        for (int i = 0; i < at.cuts[a].length; i++) {
          at.cuts[a][i] = asDouble(l.get(i));
        }
        need(at.cuts[a].length + 1 == at.values[a].length,
          "attribute '" + at.names[a] + "': cut points do not match its bins");
      }
      need(!at.numeric[a] || at.cuts[a] != null, "numeric attribute '" + at.names[a] + "' has no cut points");
      Object temporal = ad.get("temporal");  // dates or durations, as Python's reader checks it
      need(temporal == null || (at.numeric[a] && ("datetime".equals(temporal) || "duration".equals(temporal))),
        "attribute '" + at.names[a] + "': bad temporal " + temporal);
    }
    return at;
  }

  /** Each attribute's number of codes: its labels, plus one for missing values where they were seen. */
  private static int[] readCardinalities(Map<String, Object> doc, Attributes at) throws Corrupt {
    int[] cards = ints(doc.get("cardinalities"));
    need(cards.length == at.names.length, "bad cardinalities");
    for (int a = 0; a < cards.length; a++) {
      need(cards[a] >= 1 && at.values[a].length <= cards[a] && cards[a] <= at.values[a].length + 1,
        "attribute '" + at.names[a] + "': cardinality " + cards[a] + " does not match its labels");
    }
    return cards;
  }

  private static double[] readClassLogPrior(Map<String, Object> doc, int nClasses) throws Corrupt {
    List<?> lp = asList(doc.get("class_log_prior"));
    need(lp.size() == nClasses, "bad class log-prior");
    double[] logPrior = new double[nClasses];
    for (int y = 0; y < nClasses; y++) {
      need(lp.get(y) != null, "bad class log-prior");
      logPrior[y] = asDouble(lp.get(y));
    }
    return logPrior;
  }

  /** The attribute parents of every attribute (indices of other attributes). */
  private static int[][] readParents(Map<String, Object> st, int nAttr) throws Corrupt {
    List<?> pl = asList(st.get("parents"));
    need(pl.size() == nAttr, "bad structure parents");
    int[][] parents = new int[nAttr][];
    for (int a = 0; a < nAttr; a++) {
      parents[a] = ints(pl.get(a));
      for (int p : parents[a]) {
        need(p >= 0 && p < nAttr && p != a, "bad structure parents");
      }
    }
    return parents;
  }

  /** Where each tree's nodes and cells start, and what each tree is for (its attribute, branching order). */
  private static final class Layout {
    int nTrees;
    int[] treeAttr;
    int[] treeCard;
    int[] treeNodeStart;
    int[][] branching;
    int totalNodes;
    int totalCells;
  }

  private static Layout readLayout(List<?> treesDoc, List<List<Column>> batches, int[] kept, int[] cards,
      int[][] parents) throws Corrupt {
    int nAttr = cards.length;
    Layout lay = new Layout();
    int nTrees = treesDoc.size();
    need(nTrees == batches.size() && nTrees == kept.length, "the number of trees does not match the structure");
    lay.nTrees = nTrees;
    lay.treeAttr = new int[nTrees];
    lay.treeCard = new int[nTrees];
    lay.treeNodeStart = new int[nTrees + 1];
    lay.branching = new int[nTrees][];
    for (int t = 0; t < nTrees; t++) {
      Map<String, Object> td = asMap(treesDoc.get(t));
      int c = asInt(td.get("attribute"));
      need(c == kept[t] && c >= 0 && c < nAttr, "tree " + t + " is for attribute " + c + ", the structure keeps "
        + kept[t]);
      int card = asInt(td.get("cardinality"));
      need(card == cards[c], "tree " + t + ": cardinality " + card + " does not match");
      int[] vars = ints(td.get("branching"));
      need(vars.length == parents[c].length + 1 && vars[0] == -1
        && Arrays.equals(Arrays.copyOfRange(vars, 1, vars.length), parents[c]),
        "tree " + t + ": branching order does not match the structure");
      List<Column> b = batches.get(t);
      // the cell table has a row per cell; the node table (3.0) a row per node
      int cells = b.size() == NODE_COLUMNS.length ? b.get(0).length * card : b.get(0).length;
      need(cells % card == 0 && cells / card == asInt(td.get("nodes")) && cells >= card,
        "tree " + t + ": wrong number of cells");
      lay.treeAttr[t] = c;
      lay.treeCard[t] = card;
      lay.branching[t] = vars;
      lay.totalNodes += cells / card;
      lay.totalCells += cells;
      lay.treeNodeStart[t + 1] = lay.totalNodes;
    }
    return lay;
  }

  /** The nodes of every tree, concatenated, and their cells; each inner node's (still empty) child block. */
  private static final class Nodes {
    int[] parent;
    int[] depth;
    int[] branch;
    int[] cellStart;
    int[] childStart;
    double[] concentration;
    double[] logProbs;
    long[] counts;
    List<int[]> childBlocks = new ArrayList<>();
    int childCells;
  }

  private static Nodes readNodes(Layout lay, List<List<Column>> batches, int nClasses, int[] cards) throws Corrupt {
    int totalNodes = lay.totalNodes;
    Nodes nodes = new Nodes();
    nodes.parent = new int[totalNodes];
    nodes.depth = new int[totalNodes];
    nodes.branch = new int[totalNodes];
    nodes.cellStart = new int[totalNodes + 1];
    nodes.childStart = new int[totalNodes];
    nodes.concentration = new double[totalNodes];
    nodes.logProbs = new double[lay.totalCells];
    nodes.counts = new long[lay.totalCells];
    int cellOff = 0;
    for (int t = 0; t < lay.nTrees; t++) {
      cellOff = readTree(t, lay, batches.get(t), nClasses, cards, nodes, cellOff);
    }
    nodes.cellStart[totalNodes] = cellOff;
    return nodes;
  }

  /** Check tree {@code t}'s cells and copy its nodes into {@code nodes}; return the next cell offset. */
  private static int readTree(int t, Layout lay, List<Column> b, int nClasses, int[] cards, Nodes nodes,
      int cellOff) throws Corrupt {
    if (b.size() == NODE_COLUMNS.length) {
      return readNodeTree(t, lay, b, nClasses, cards, nodes, cellOff);
    }
    int card = lay.treeCard[t];
    int[] tree = (int[]) ArrowFileReader.values(b.get(0));
    int[] node = (int[]) ArrowFileReader.values(b.get(1));
    int[] par = (int[]) ArrowFileReader.values(b.get(2));
    int[] dep = (int[]) ArrowFileReader.values(b.get(3));
    int[] br = (int[]) ArrowFileReader.values(b.get(4));
    int[] val = (int[]) ArrowFileReader.values(b.get(5));
    long[] cnt = (long[]) ArrowFileReader.values(b.get(6));
    double[] lpr = (double[]) ArrowFileReader.values(b.get(7));
    int[] grp = (int[]) ArrowFileReader.values(b.get(8));
    double[] conc = (double[]) ArrowFileReader.values(b.get(9));
    int n = lay.treeNodeStart[t + 1] - lay.treeNodeStart[t];
    int[] radix = radix(lay, t, nClasses, cards);
    // the checks of every cell and node: a message is only made for a failing one (made eagerly, the
    // strings of a 376,000-cell model took half of a cold JVM's read, about 0.5 s)
    for (int i = 0; i < n * card; i++) {
      int j = i / card;
      if (tree[i] != t) {
        throw new Corrupt("tree " + t + ": wrong tree column");
      }
      if (node[i] != j || val[i] != i % card) {
        throw new Corrupt("tree " + t + ": cells out of order");
      }
      int f = j * card;
      if (par[i] != par[f] || dep[i] != dep[f] || br[i] != br[f] || grp[i] != grp[f]
        || Double.compare(conc[i], conc[f]) != 0) {
        throw new Corrupt("tree " + t + ": a column differs between the cells of a node");
      }
      if (cnt[i] < 0) {
        throw new Corrupt("tree " + t + ": negative counts");
      }
    }
    for (int j = 0; j < n; j++) {
      int f = j * card;
      checkNode(t, j, par[f], dep[f], br[f], j > 0 && par[f] >= 0 && par[f] < j ? dep[par[f] * card] : 0,
        j > 0 ? dep[f - card] : 0, radix);
    }
    return copyTree(t, lay, radix, par, dep, br, conc, card, cnt, lpr, nodes, cellOff);
  }

  /** {@link #readTree} for the node table of format 3.0: a row per node, its cells as two lists. */
  private static int readNodeTree(int t, Layout lay, List<Column> b, int nClasses, int[] cards, Nodes nodes,
      int cellOff) throws Corrupt {
    int card = lay.treeCard[t];
    int n = lay.treeNodeStart[t + 1] - lay.treeNodeStart[t];
    int[] par = (int[]) ArrowFileReader.values(b.get(0));
    int[] dep = (int[]) ArrowFileReader.values(b.get(1));
    int[] br = (int[]) ArrowFileReader.values(b.get(2));
    double[] conc = (double[]) ArrowFileReader.values(b.get(4));
    for (int c = 5; c <= 6; c++) {
      int[] offsets = b.get(c).offsets;
      boolean ok = offsets.length == n + 1;
      for (int j = 0; ok && j <= n; j++) {
        ok = offsets[j] == j * card;
      }
      need(ok, "tree " + t + ": a node's lists do not hold one value per value of the attribute");
    }
    long[] cnt = (long[]) ArrowFileReader.values(b.get(5));
    double[] lpr = (double[]) ArrowFileReader.values(b.get(6));
    for (long x : cnt) {
      if (x < 0) {
        throw new Corrupt("tree " + t + ": negative counts");
      }
    }
    int[] radix = radix(lay, t, nClasses, cards);
    for (int j = 0; j < n; j++) {
      checkNode(t, j, par[j], dep[j], br[j], j > 0 ? dep[par[j] >= 0 && par[j] < j ? par[j] : 0] : 0,
        j > 0 ? dep[j - 1] : 0, radix);
    }
    return copyTree(t, lay, radix, par, dep, br, conc, 1, cnt, lpr, nodes, cellOff);
  }

  private static int[] radix(Layout lay, int t, int nClasses, int[] cards) {
    int depthMax = lay.branching[t].length;
    int[] radix = new int[depthMax];
    radix[0] = nClasses;
    for (int j = 1; j < depthMax; j++) {
      radix[j] = cards[lay.branching[t][j]];
    }
    return radix;
  }

  /**
   * The checks of node {@code j} of tree {@code t}: the root's fields; a parent before the node, one level
   * up; depths in order, at most the branching's length; a branch value the branching variable has.
   */
  private static void checkNode(int t, int j, int par, int dep, int br, int parentDepth, int previousDepth,
      int[] radix) throws Corrupt {
    if (j == 0) {
      if (par != -1 || dep != 0 || br != -1) {
        throw new Corrupt("tree " + t + ": bad root");
      }
      return;
    }
    if (par < 0 || par >= j) {
      throw new Corrupt("tree " + t + ": bad parent index");
    }
    if (dep != parentDepth + 1 || dep < previousDepth || dep > radix.length) {
      throw new Corrupt("tree " + t + ": bad depths");
    }
    if (br < 0 || br >= radix[dep - 1]) {
      throw new Corrupt("tree " + t + ": branch value out of range");
    }
  }

  /**
   * Copy tree {@code t}'s nodes into {@code nodes} (the per-node arrays read with a stride of
   * {@code stride} entries per node: the cell table's card, the node table's 1) and its cells; add a child
   * block for every node above the leaves. Returns the next cell offset.
   */
  private static int copyTree(int t, Layout lay, int[] radix, int[] par, int[] dep, int[] br, double[] conc,
      int stride, long[] cnt, double[] lpr, Nodes nodes, int cellOff) {
    int card = lay.treeCard[t];
    int n = lay.treeNodeStart[t + 1] - lay.treeNodeStart[t];
    int off = lay.treeNodeStart[t];
    for (int j = 0; j < n; j++) {
      int f = j * stride;
      nodes.parent[off + j] = par[f] < 0 ? -1 : off + par[f];
      nodes.depth[off + j] = dep[f];
      nodes.branch[off + j] = br[f];
      nodes.concentration[off + j] = conc[f];
      nodes.cellStart[off + j] = cellOff + j * card;
      nodes.childStart[off + j] = -1;
    }
    for (int j = 0; j < n; j++) {
      int d = dep[j * stride];
      if (d < radix.length) {
        nodes.childStart[off + j] = nodes.childCells;
        int[] block = new int[radix[d]];
        Arrays.fill(block, -1);
        nodes.childBlocks.add(block);
        nodes.childCells += block.length;
      }
    }
    System.arraycopy(lpr, 0, nodes.logProbs, cellOff, n * card);
    System.arraycopy(cnt, 0, nodes.counts, cellOff, n * card);
    return cellOff + n * card;
  }

  /** The child table: the child blocks in a row, each child linked into its parent's block at its branch. */
  private static int[] linkChildren(Nodes nodes) throws Corrupt {
    int[] childTable = new int[nodes.childCells];
    int pos = 0;
    for (int[] block : nodes.childBlocks) {
      System.arraycopy(block, 0, childTable, pos, block.length);
      pos += block.length;
    }
    for (int j = 0; j < nodes.parent.length; j++) {
      int p = nodes.parent[j];
      if (p >= 0) {
        int slot = nodes.childStart[p] + nodes.branch[j];
        need(childTable[slot] < 0, "two nodes share a context");
        childTable[slot] = j;
      }
    }
    return childTable;
  }

  /** "hdp (5000 iterations, burn-in 500, tying level, seed 0)", "m-estimate (m=1.0)", "laplace"... */
  private static String estimatorSummary(Map<String, Object> doc, Map<String, Object> est, String estName) {
    StringBuilder summary = new StringBuilder(estName);
    if ("hdp".equals(estName)) {
      summary.append(" (").append(est.get("iterations")).append(" iterations, burn-in ").append(est.get("burn_in"))
        .append(", tying ").append(est.get("tying")).append(", seed ").append(doc.get("seed")).append(')');
    } else if (est.containsKey("m")) {
      summary.append(" (m=").append(est.get("m")).append(')');
    }
    return summary.toString();
  }

  /** The training rows the model document records, or -1. */
  private static long fitRows(Map<String, Object> doc) {
    Object fit = doc.get("fit");
    if (fit instanceof Map && asMap(fit).get("rows") instanceof Long) {
      return (Long) asMap(fit).get("rows");
    }
    return -1;
  }
}
