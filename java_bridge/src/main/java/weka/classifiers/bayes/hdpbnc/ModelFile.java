/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import weka.classifiers.bayes.hdpbnc.ArrowFileReader.Column;
import weka.classifiers.bayes.hdpbnc.ArrowFileReader.Field;

/**
 * Reads the hdp-bnc model file (format 4.x) that {@code hdp_plugin/model/modelfile.py} writes (see
 * {@code docs/model-format.md}): an Arrow IPC file with one record batch per context tree (the
 * networks' trees in order) and one row per node: {@code branch}, {@code children} (uint16, or int32
 * where a cardinality exceeds 65,535), {@code log_backoff} (float64) and {@code cells}, a list of
 * structs of {@code value} and {@code log_prob}: the node's observed cells; and a JSON model document
 * in the schema metadata under {@code hdp_plugin.model}. The file's SHA-256
 * ({@code hdp_plugin.sha256}) over both JSON documents and every column is verified, every key of the
 * document is checked by its type and every node as hdp_plugin checks it (docs/model-format.md sections 2, 4
 * and 8: one rule for both readers), so a corrupted or inconsistent file is an error naming the key, or the
 * tree and the node, never a wrong answer.
 */
public final class ModelFile {

  /** The model document's {@code format}. */
  public static final String FORMAT_NAME = "hdp-bnc-model";
  /** The major version of the format this reader reads (any minor). */
  public static final int FORMAT_MAJOR = 4;

  static final String MODEL_KEY = "hdp_plugin.model";
  static final String TRAINING_KEY = "hdp_plugin.training";
  static final String CHECKSUM_KEY = "hdp_plugin.sha256";

  /** The node table's columns as {@link Field#toString()} gives them, where every cardinality fits uint16. */
  static final List<String> NARROW_COLUMNS = columns("uint16");
  /** The same, where a cardinality exceeds 65,535. */
  static final List<String> WIDE_COLUMNS = columns("int32");

  /** The estimators and structures of a model document's parameters (hdp_plugin.config). */
  static final List<String> ESTIMATORS = Arrays.asList("hdp", "m-estimate", "laplace", "mle");
  static final List<String> STRUCTURES = Arrays.asList("nb", "tan", "kdb", "skdb", "eskdb");

  private static List<String> columns(String index) {
    return Arrays.asList("branch: " + index, "children: " + index, "log_backoff: double",
      "cells: list<struct<value: " + index + " not null, log_prob: double not null> not null>");
  }

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

  /** {@link #need(boolean, String)} with the message {@code prefix + what}, made only on failure (checks in loops). */
  private static void need(boolean cond, String prefix, String what) throws Corrupt {
    if (!cond) {
      throw new Corrupt(prefix + what);
    }
  }

  /** {@link #need(boolean, String)} with the message {@code at + j + what}, made only on failure (checks in loops). */
  private static void need(boolean cond, String at, int j, String what) throws Corrupt {
    if (!cond) {
      throw new Corrupt(at + j + what);
    }
  }

  /**
   * Reads and verifies a model file.
   *
   * @param path the file
   * @return the model
   * @throws ModelFileException for a missing, truncated, corrupted or foreign file, or one of another
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
    for (String key : new String[] {MODEL_KEY, TRAINING_KEY, CHECKSUM_KEY}) {
      if (reader.repeatedKeys().contains(key)) {
        throw new ModelFileException(source + ": corrupted model file (the metadata key " + key + " given twice)",
          null);
      }
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
    if (major != FORMAT_MAJOR) {
      throw new ModelFileException(source + ": model format " + major + "." + minor + (major > FORMAT_MAJOR
        ? " is newer than this Weka package reads (" + FORMAT_MAJOR + ".x); upgrade the HDPBayesNet package"
        : " is no longer read by this Weka package (it reads " + FORMAT_MAJOR + ".x); train the model again"), null);
    }
    List<String> columns = new ArrayList<>();
    for (Field f : reader.fields()) {
      columns.add(f.toString());
    }
    boolean wide = columns.equals(WIDE_COLUMNS);
    if (!wide && !columns.equals(NARROW_COLUMNS)) {
      throw new ModelFileException(source + ": corrupted model file (unexpected columns " + reader.fieldNames()
        + ")", null);
    }
    List<List<Column>> batches = new ArrayList<>();
    try {
      for (int i = 0; i < reader.numBatches(); i++) {
        List<Column> b = reader.readBatch(i, false); // the values one tree at a time, when building
        for (Column c : b) {
          if (c.valid != null) { // the reader keeps validity only for a column with nulls
            throw new ModelFileException(source + ": corrupted model file (nulls in tree " + i + ")", null);
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
      return build(doc, batches, modelJson.length);
    } catch (Corrupt e) {
      throw new ModelFileException(source + ": corrupted model file (" + e.getMessage() + ")", e);
    } catch (RuntimeException e) { // missing keys, wrong JSON types, indices out of range
      throw new ModelFileException(source + ": corrupted model file (bad model metadata: " + e + ")", e);
    }
  }

  /**
   * SHA-256 of the two JSON documents, then of every column of every batch as the file holds them,
   * little-endian: a list's int32 offsets, then its items' columns in turn (the node table's cells: their
   * offsets, their values, their log-probabilities).
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
        update(md, c);
      }
    }
    return String.format("%064x", new java.math.BigInteger(1, md.digest()));
  }

  private static void update(MessageDigest md, Column c) {
    if (c.rawOffsets != null) {
      md.update(c.rawOffsets.duplicate());
    }
    if (c.raw != null) {
      md.update(c.raw.duplicate()); // the file's own little-endian bytes: no copy
    }
    for (Column child : c.children) {
      update(md, child);
    }
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
  // the document's types (modelfile.py's _DOCUMENT_KEYS: docs/model-format.md sections 4, 4b and 8)
  // ------------------------------------------------------------------------------------------
  /** A type of a value of the model document. */
  private interface Spec {
    void check(Object v, String where) throws Corrupt;
  }

  /** A JSON integer in [-2^31, 2^31). */
  static boolean isInt(Object o) {
    return o instanceof Long && (Long) o == (int) (long) (Long) o;
  }

  /** A JSON integer of any size. */
  static boolean isInteger(Object o) {
    return o instanceof Long || o instanceof BigInteger;
  }

  /** A JSON number: an integer or not, never a boolean. */
  static boolean isNumber(Object o) {
    return o instanceof Long || o instanceof Double || o instanceof BigInteger;
  }

  /** A JSON number as the double nearest it (an integer beyond a double's range is infinite). */
  static double toDouble(Object o) {
    return ((Number) o).doubleValue();
  }

  private static Spec kind(String kind) {
    return (v, where) -> {
      boolean ok;
      String what;
      switch (kind) {
        case "int":
          ok = isInt(v);
          what = "an integer";
          break;
        case "integer":
          ok = isInteger(v);
          what = "an integer";
          break;
        case "number":
          ok = isNumber(v);
          what = "a number";
          break;
        case "string":
          ok = v instanceof String;
          what = "a string";
          break;
        case "bool":
          ok = v instanceof Boolean;
          what = "true or false";
          break;
        case "object":
          ok = v instanceof Map;
          what = "an object";
          break;
        default:
          ok = v instanceof List;
          what = "a list";
      }
      need(ok, where, " is not " + what);
    };
  }

  private static Spec listOf(Spec item) {
    return (v, where) -> {
      need(v instanceof List, where, " is not a list");
      List<?> l = (List<?>) v;
      for (int i = 0; i < l.size(); i++) {
        item.check(l.get(i), where + "[" + i + "]");
      }
    };
  }

  private static Spec orNull(Spec s) {
    return (v, where) -> {
      if (v != null) {
        s.check(v, where);
      }
    };
  }

  /** An object with these keys (name, spec, name, spec, ...; a name ending in ? may be absent; others are ignored). */
  private static Spec obj(Object... keys) {
    return (v, where) -> {
      need(v instanceof Map, where, " is not an object");
      Map<?, ?> m = (Map<?, ?>) v;
      for (int i = 0; i < keys.length; i += 2) {
        String key = (String) keys[i];
        String name = key.endsWith("?") ? key.substring(0, key.length() - 1) : key;
        String at = where.isEmpty() ? name : where + "." + name;
        if (m.containsKey(name)) {
          ((Spec) keys[i + 1]).check(m.get(name), at);
        } else {
          need(key.endsWith("?"), at, " is missing");
        }
      }
    };
  }

  private static final Spec INT = kind("int");
  private static final Spec INTEGER = kind("integer");
  private static final Spec NUMBER = kind("number");
  private static final Spec STRING = kind("string");
  private static final Spec BOOL = kind("bool");

  private static final Spec MEMBER_KEYS = obj(
    "weight", NUMBER,
    "seed", obj("entropy", INTEGER, "spawn_key", listOf(INTEGER)),
    "attributes", listOf(obj("name", STRING, "values", listOf(STRING), "numeric", BOOL,
      "cut_points", orNull(listOf(NUMBER)), "temporal?", STRING)),
    "cardinalities", listOf(INT),
    "structure", obj("kind", STRING, "k", INT, "kept", listOf(INT), "parents", listOf(listOf(INT)),
      "order", listOf(INT), "mi", listOf(orNull(NUMBER)), "info", kind("object")),
    "trees", listOf(obj("attribute", INT, "name", STRING, "cardinality", INT, "branching", listOf(INT),
      "nodes", INT, "cells", INT, "concentrations?", listOf(orNull(listOf(NUMBER))))));

  private static final Spec DOCUMENT_KEYS = obj(
    "package_version", STRING,
    "class", obj("name", STRING, "values", listOf(STRING)),
    "classes", obj("dtype", STRING, "values", kind("list")),
    "n_classes", INT,
    "class_log_prior", listOf(NUMBER),
    "estimator", obj("name", STRING, "backoff", STRING),
    "seed", orNull(INTEGER),
    "params", obj("structure?", STRING, "k?", INT, "estimator?", STRING, "iterations?", orNull(INT),
      "burn_in?", orNull(INT), "tying?", STRING, "m?", NUMBER, "discretization?", STRING,
      "random_state?", orNull(INTEGER), "n_members?", INT),
    "feature_names_in", BOOL,
    "left_out?", listOf(obj("name", STRING, "index", INT)),
    "fit", obj("rows?", INTEGER, "dropped_missing_class?", INTEGER, "warnings?", listOf(STRING),
      "n_samples?", INT, "burn_in?", INT),
    "combination", STRING,
    "members", listOf(MEMBER_KEYS));

  private static final Map<String, Spec> ESTIMATOR_KEYS = new java.util.HashMap<>();

  static {
    ESTIMATOR_KEYS.put("hdp", obj("iterations", INT, "burn_in", INT, "n_samples", INT, "tying", STRING, "window", INT,
      "tolerance?", NUMBER, "tree_iterations?", listOf(INT)));
    ESTIMATOR_KEYS.put("m-estimate", obj("m", NUMBER));
    ESTIMATOR_KEYS.put("mle", obj("m", NUMBER));
    ESTIMATOR_KEYS.put("laplace", obj());
  }

  /** The model document's keys and their types. */
  static void checkTypes(Map<String, Object> doc) throws Corrupt {
    DOCUMENT_KEYS.check(doc, "");
    Object name = asMap(doc.get("estimator")).get("name");
    need(ESTIMATOR_KEYS.containsKey(name), "estimator.name '" + name + "' is not an estimator");
    ESTIMATOR_KEYS.get(name).check(doc.get("estimator"), "estimator");
  }

  private static boolean distinct(List<?> values) {
    return new HashSet<>(values).size() == values.size();
  }

  // ------------------------------------------------------------------------------------------
  // building the model (the checks of read_model, _read_network and _read_tables in modelfile.py)
  // ------------------------------------------------------------------------------------------
  /** The classifier parameters' domains, as hdp_plugin.params checks them (the Weka options' own). */
  private static void checkParams(Map<String, Object> params, String structure, String estimator) throws Corrupt {
    String[][] choices = {{"tying", "none", "same-parent", "level", "single"},
      {"discretization", "auto", "mdl", "stochastic-mdl", "stochastic-gain", "equal-frequency", "equal-width", "none"}};
    for (String[] c : choices) {
      if (params.containsKey(c[0])) {
        need(Arrays.asList(c).subList(1, c.length).contains(params.get(c[0])), "params: bad " + c[0] + " "
          + params.get(c[0]));
      }
    }
    long[][] ranges = {{0, weka.classifiers.bayes.HDPBayesNet.MAX_K}, {1, weka.classifiers.bayes.HDPBayesNet.MAX_MEMBERS},
      {1, weka.classifiers.bayes.HDPBayesNet.MAX_ITERATIONS}, {0, Long.MAX_VALUE}};
    String[] names = {"k", "n_members", "iterations", "burn_in"};
    for (int i = 0; i < names.length; i++) {
      Object v = params.get(names[i]);
      need(v == null || (Long) v >= ranges[i][0] && (Long) v <= ranges[i][1], "params: bad " + names[i] + " " + v);
    }
    Object m = params.get("m");
    need(m == null || Double.isFinite(toDouble(m)) && toDouble(m) >= 0, "params: bad m " + m);
    Object seed = params.get("random_state");
    need(seed == null || seed instanceof Long && (Long) seed >= 0, "params: bad random_state " + seed);
    Object burnIn = params.get("burn_in");
    if ("hdp".equals(estimator) && burnIn != null) { // below the most iterations a fit runs (auto: the structure's)
      Object its = params.get("iterations");
      long cap = its != null ? (Long) its : "eskdb".equals(structure) ? weka.classifiers.bayes.HDPBayesNet.ESKDB_ITERATIONS
        : weka.classifiers.bayes.HDPBayesNet.NETWORK_ITERATIONS;
      need((Long) burnIn < cap, "params: burn_in " + burnIn + " is not below the iterations " + cap);
    }
  }

  /** The estimator's settings in their domains, as modelfile.py's _check_estimator. */
  private static void checkEstimator(Map<String, Object> est, int nTrees) throws Corrupt {
    if ("hdp".equals(est.get("name"))) {
      long its = (Long) est.get("iterations");
      long burnIn = (Long) est.get("burn_in");
      need(its >= 1 && burnIn >= 0 && burnIn < its && (Long) est.get("n_samples") >= 1 && (Long) est.get("window") >= 1
        && Arrays.asList("none", "same-parent", "level", "single").contains(est.get("tying")), "bad estimator settings");
      need(est.containsKey("tolerance") == est.containsKey("tree_iterations"), "estimator.tolerance without "
        + "tree_iterations, or the other way round");
      if (est.containsKey("tolerance")) {
        double tol = toDouble(est.get("tolerance"));
        need(tol > 0 && Double.isFinite(tol), "bad estimator.tolerance");
        List<?> trees = asList(est.get("tree_iterations"));
        need(trees.size() == nTrees, "bad estimator.tree_iterations");
        for (Object v : trees) {
          need((Long) v >= 1 && (Long) v <= its, "bad estimator.tree_iterations");
        }
      }
    } else if (est.containsKey("m")) {
      double m = toDouble(est.get("m"));
      need(Double.isFinite(m) && m >= 0, "bad estimator.m");
    }
  }

  /** A {@code classes.dtype} other than {@code object} (modelfile.py's _CLASSES_DTYPE). */
  private static final java.util.regex.Pattern CLASSES_DTYPE =
    java.util.regex.Pattern.compile("[<>|=]?(b1|[iu][1248]|f[248]|U[1-9][0-9]{0,8})");

  /**
   * {@code classes} checked against the class labels (modelfile.py's _classes): the same values, in the
   * same order, of a dtype no wider than the document's bytes. Text is its label, true and false
   * {@code True} and {@code False}, an integer its decimal digits, a float a label that reads as the same
   * number.
   */
  private static void checkClasses(Map<String, Object> classes, String[] labels, long docBytes) throws Corrupt {
    String dtype = (String) classes.get("dtype");
    List<?> values = asList(classes.get("values"));
    need(values.size() == labels.length, "classes do not match the class labels");
    char kind = 'O';
    int size = 0;
    if (!"object".equals(dtype)) {
      need(CLASSES_DTYPE.matcher(dtype).matches(), "classes.dtype '" + dtype.substring(0, Math.min(40, dtype.length()))
        + "' is not one a model has");
      String spec = dtype.replaceFirst("^[<>|=]", "");
      kind = spec.charAt(0);
      size = Integer.parseInt(spec.substring(1));
      need(kind != 'U' || size <= docBytes, "classes.dtype '" + dtype + "' is wider than the model document");
    }
    for (int i = 0; i < labels.length; i++) {
      need(classValueMatches(values.get(i), labels[i], kind, size), "classes.values[", i, "] is not the class label '"
        + labels[i] + "'");
    }
  }

  private static boolean classValueMatches(Object v, String label, char kind, int size) {
    if ((kind == 'O' || kind == 'U') && v instanceof String) {
      return v.equals(label) && (kind == 'O' || ((String) v).codePointCount(0, ((String) v).length()) <= size);
    }
    if ((kind == 'O' || kind == 'b') && v instanceof Boolean) {
      return label.equals((Boolean) v ? "True" : "False");
    }
    if ((kind == 'O' || kind == 'i' || kind == 'u') && isInteger(v)) {
      BigInteger x = v instanceof BigInteger ? (BigInteger) v : BigInteger.valueOf((Long) v);
      boolean fits = kind == 'O' || (kind == 'i' ? x.bitLength() < 8 * size : x.signum() >= 0 && x.bitLength() <= 8 * size);
      return fits && label.equals(x.toString());
    }
    if ((kind == 'O' || kind == 'f') && isNumber(v)) {
      double x = toDouble(v);
      double max = kind == 'f' && size == 2 ? 65504.0 : kind == 'f' && size == 4 ? Float.MAX_VALUE : Double.MAX_VALUE;
      Double n = InstanceCoder.labelNumber(label);
      return Math.abs(x) <= max && n != null && n == x;
    }
    return false;
  }

  /**
   * The model: the class, its log-prior, the parameters and the estimator, then each network with its
   * trees' batches in turn, and the weights.
   */
  private static HDPModel build(Map<String, Object> doc, List<List<Column>> batches, long docBytes) throws Corrupt {
    checkTypes(doc);
    Map<String, Object> cls = asMap(doc.get("class"));
    String className = (String) cls.get("name");
    String[] classValues = strings(cls.get("values"));
    int nClasses = asInt(doc.get("n_classes"));
    need(nClasses == classValues.length && nClasses >= 1, "bad number of classes");
    need(distinct(Arrays.asList(classValues)), "a class label given twice");
    checkClasses(asMap(doc.get("classes")), classValues, docBytes);
    double[] logPrior = readClassLogPrior(doc, nClasses);
    Map<String, Object> params = asMap(doc.get("params"));
    Object structure = params.containsKey("structure") ? params.get("structure") : "eskdb";
    Object estimator = params.containsKey("estimator") ? params.get("estimator") : "hdp";
    need(STRUCTURES.contains(structure), "params: bad structure " + structure);
    need(ESTIMATORS.contains(estimator), "params: bad estimator " + estimator);
    checkParams(params, (String) structure, (String) estimator);
    Map<String, Object> est = asMap(doc.get("estimator"));
    need(estimator.equals(est.get("name")), "the estimator does not match the parameters");
    boolean hdp = "hdp".equals(estimator);
    Object backoff = est.get("backoff");
    need((hdp ? "parent" : "uniform").equals(backoff), "back-off " + backoff + " is not the " + estimator
      + " estimator's");
    List<?> parts = asList(doc.get("members"));
    int allTrees = 0;
    for (Object part : parts) {
      allTrees += asList(asMap(part).get("trees")).size();
    }
    checkEstimator(est, allTrees);
    need(!parts.isEmpty(), "a model without members");
    if ("eskdb".equals(structure)) {
      Object n = params.containsKey("n_members") ? params.get("n_members") : (long) weka.classifiers.bayes.HDPBayesNet.DEFAULT_MEMBERS;
      need((Long) n == parts.size(), "params.n_members is " + n + " but the file holds " + parts.size() + " members");
    } else {
      need(parts.size() == 1, "a " + structure + " model of " + parts.size() + " networks");
    }
    HDPModel.Network[] members = new HDPModel.Network[parts.size()];
    double[] weights = new double[parts.size()];
    int first = 0;
    for (int e = 0; e < members.length; e++) {
      Map<String, Object> part = asMap(parts.get(e));
      int nTrees = asList(part.get("trees")).size();
      need(first + nTrees <= batches.size(), "the number of trees does not match the structure");
      members[e] = readNetwork(part, nClasses, batches.subList(first, first + nTrees), hdp, "mle".equals(estimator));
      first += nTrees;
      double w = toDouble(part.get("weight"));
      need(Double.isFinite(w) && w > 0, "a member's weight " + part.get("weight"));
      weights[e] = w;
    }
    need(first == batches.size(), "the number of trees does not match the structure");
    double total = 0;
    for (double w : weights) {
      total += w;
    }
    need(Math.abs(total - 1.0) <= 1e-9, "the members' weights sum to " + total + ", not 1");
    for (HDPModel.Network m : members) { // names, which are numeric, and a nominal attribute's labels
      need(Arrays.equals(m.m_AttrNames, members[0].m_AttrNames)
        && Arrays.equals(m.m_AttrNumeric, members[0].m_AttrNumeric), "members disagree on the attributes");
      for (int a = 0; a < m.m_AttrNames.length; a++) {
        need(m.m_AttrNumeric[a] || Arrays.equals(m.m_AttrValues[a], members[0].m_AttrValues[a]),
          "members disagree on the attributes");
      }
    }
    checkLeftOut(doc.containsKey("left_out") ? doc.get("left_out") : new ArrayList<>(), members[0].m_AttrNames);
    return new HDPModel(className, classValues, logPrior, members, weights, String.valueOf(estimator),
      estimatorSummary(doc, est, String.valueOf(estimator)), (String) doc.get("package_version"), fitRows(doc));
  }

  private static double[] readClassLogPrior(Map<String, Object> doc, int nClasses) throws Corrupt {
    List<?> lp = asList(doc.get("class_log_prior"));
    need(lp.size() == nClasses, "bad class log-prior");
    double[] logPrior = new double[nClasses];
    double sum = 0;
    for (int y = 0; y < nClasses; y++) {
      logPrior[y] = toDouble(lp.get(y));
      need(logPrior[y] <= 1e-9, "bad class log-prior");
      sum += Math.exp(logPrior[y]);
    }
    need(Math.abs(sum - 1.0) < 1e-6, "bad class log-prior");
    return logPrior;
  }

  /**
   * The document's {@code left_out} entries (the training input's attributes left out as row
   * identifiers): each a name that is no model attribute's and an index, ascending, that puts it
   * among them. The Weka reader matches attributes by name and uses no more of them.
   */
  private static void checkLeftOut(Object entries, String[] kept) throws Corrupt {
    Set<String> names = new HashSet<>(Arrays.asList(kept));
    long last = -1;
    int k = 0;
    for (Object o : (List<?>) entries) {
      String name = (String) asMap(o).get("name");
      long index = (Long) asMap(o).get("index");
      need(!names.contains(name) && index > last && index <= kept.length + k, "bad left_out entries");
      names.add(name);
      last = index;
      k++;
    }
  }

  /** One network: its attributes, cardinalities, structure, trees and the concentrations of its trees. */
  private static HDPModel.Network readNetwork(Map<String, Object> part, int nClasses, List<List<Column>> batches,
      boolean backoffToParent, boolean mle) throws Corrupt {
    HDPModel.Network net = new HDPModel.Network();
    readAttributes(net, asList(part.get("attributes")));
    int nAttr = net.m_AttrNames.length;
    need(distinct(Arrays.asList(net.m_AttrNames)), "an attribute name given twice");
    int[] cards = ints(part.get("cardinalities"));
    need(cards.length == nAttr, "bad cardinalities");
    for (int a = 0; a < nAttr; a++) {
      need(cards[a] >= 1, "bad cardinalities");
      need(net.m_AttrValues[a].length <= cards[a] && cards[a] <= net.m_AttrValues[a].length + 1,
        "attribute '" + net.m_AttrNames[a] + "': cardinality " + cards[a] + " does not match its labels");
    }
    net.m_Cardinalities = cards;
    Map<String, Object> st = asMap(part.get("structure"));
    net.m_Parents = readParents(st, nAttr);
    net.m_Kept = ints(st.get("kept"));
    for (int i = 0; i < net.m_Kept.length; i++) {
      need(net.m_Kept[i] >= 0 && net.m_Kept[i] < nAttr && (i == 0 || net.m_Kept[i] > net.m_Kept[i - 1]),
        "bad kept attributes");
    }
    List<?> order = asList(st.get("order"));
    for (int j : ints(order)) {
      need(j >= 0 && j < nAttr, "bad attribute order");
    }
    need(distinct(order), "bad attribute order");
    need(asList(st.get("mi")).size() == nAttr, "bad mutual informations");
    net.m_StructureKind = (String) st.get("kind");
    net.m_K = asInt(st.get("k"));
    need(Arrays.asList("nb", "tan", "kdb", "skdb").contains(net.m_StructureKind) && net.m_K >= 0,
      "bad structure kind or k");
    net.m_CellLimited = cellLimited(st.get("info"));
    List<?> trees = asList(part.get("trees"));
    readTrees(net, trees, batches, nClasses, backoffToParent, mle);
    net.m_Concentrations = readConcentrations(trees);
    return net;
  }

  /** The fields of {@code structure.info.cell_limited}, in the order of {@link HDPModel.Network#m_CellLimited}. */
  static final String[] CELL_LIMITED = {"n_star", "k_star", "cells", "max_cells"};

  /**
   * {@code structure.info.cell_limited} (docs/model-format.md section 4b): the best model's attributes, parents
   * and cells, and the cap, of an SkDB that took a smaller model to stay within its table-cell cap; null where
   * it is absent (or not four integers: it only informs, and the model predicts the same without it).
   */
  static long[] cellLimited(Object info) {
    Object c = info instanceof Map ? ((Map<?, ?>) info).get("cell_limited") : null;
    if (!(c instanceof Map)) {
      return null;
    }
    long[] out = new long[CELL_LIMITED.length];
    for (int i = 0; i < out.length; i++) {
      Object v = ((Map<?, ?>) c).get(CELL_LIMITED[i]);
      if (!(v instanceof Long)) {
        return null;
      }
      out[i] = (Long) v;
    }
    return out;
  }

  /** The attributes of a network: names, labels, which are numeric, and their cut points. */
  private static void readAttributes(HDPModel.Network net, List<?> attrs) throws Corrupt {
    int nAttr = attrs.size();
    net.m_AttrNames = new String[nAttr];
    net.m_AttrValues = new String[nAttr][];
    net.m_AttrNumeric = new boolean[nAttr];
    net.m_CutPoints = new double[nAttr][];
    for (int a = 0; a < nAttr; a++) {
      Map<String, Object> ad = asMap(attrs.get(a));
      String name = (String) ad.get("name");
      net.m_AttrNames[a] = name;
      net.m_AttrValues[a] = strings(ad.get("values"));
      need(distinct(Arrays.asList(net.m_AttrValues[a])), "attribute '" + name + "': a label given twice");
      net.m_AttrNumeric[a] = (Boolean) ad.get("numeric");
      Object cp = ad.get("cut_points");
      need(net.m_AttrNumeric[a] == (cp != null), "attribute '" + name + "': cut points "
        + (net.m_AttrNumeric[a] ? "missing" : "on a nominal attribute"));
      if (cp != null) {
        List<?> l = asList(cp);
        double[] cuts = new double[l.size()];
        for (int i = 0; i < cuts.length; i++) {
          cuts[i] = toDouble(l.get(i));
          need(Double.isFinite(cuts[i]) && (i == 0 || cuts[i] > cuts[i - 1]), "attribute '" + name
            + "': bad cut points");
        }
        need(cuts.length + 1 == net.m_AttrValues[a].length, "attribute '" + name
          + "': cut points do not match its bins");
        net.m_CutPoints[a] = cuts;
      }
      Object temporal = ad.get("temporal"); // dates or durations, as Python's reader checks it
      need(temporal == null || (net.m_AttrNumeric[a] && ("datetime".equals(temporal) || "duration".equals(temporal))),
        "attribute '" + name + "': bad temporal " + temporal);
    }
  }

  /** The attribute parents of every attribute (indices of other attributes, none twice). */
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
    for (int a = 0; a < nAttr; a++) {
      need(distinct(asList(pl.get(a))), "bad structure parents (an attribute parent given twice)");
    }
    return parents;
  }

  /**
   * Per tree, the smallest and the largest concentration of its depths' ranges; null for a network
   * whose trees do not all have them (the baselines have none). Each tree's {@code concentrations}, if
   * there, is a list of null or [smallest, largest] pairs of positive numbers.
   */
  private static double[][] readConcentrations(List<?> trees) throws Corrupt {
    double[][] out = new double[trees.size()][];
    boolean all = !trees.isEmpty();
    for (int t = 0; t < out.length; t++) {
      Object r = asMap(trees.get(t)).get("concentrations");
      if (r == null) {
        all = false;
        continue;
      }
      double lo = Double.POSITIVE_INFINITY;
      double hi = Double.NEGATIVE_INFINITY;
      for (Object v : (List<?>) r) {
        if (v == null) {
          continue;
        }
        need(((List<?>) v).size() == 2, "tree " + t + ": bad concentrations");
        for (Object x : (List<?>) v) {
          need(toDouble(x) > 0, "tree " + t + ": bad concentrations");
        }
        lo = Math.min(lo, toDouble(((List<?>) v).get(0)));
        hi = Math.max(hi, toDouble(((List<?>) v).get(1)));
      }
      out[t] = lo <= hi ? new double[] {lo, hi} : null;
    }
    return all ? out : null;
  }

  /**
   * A network's trees: what each is for (checked against the structure), then every node of every tree,
   * checked, into flat arrays over the network's nodes and cells.
   */
  private static void readTrees(HDPModel.Network net, List<?> treesDoc, List<List<Column>> batches, int nClasses,
      boolean backoffToParent, boolean mle) throws Corrupt {
    int nTrees = treesDoc.size();
    need(nTrees == batches.size() && nTrees == net.m_Kept.length, "the number of trees does not match the structure");
    net.m_TreeAttr = new int[nTrees];
    net.m_TreeCard = new int[nTrees];
    net.m_TreeNodeStart = new int[nTrees + 1];
    net.m_Branching = new int[nTrees][];
    long totalNodes = 0;
    long totalCells = 0;
    for (int t = 0; t < nTrees; t++) {
      Map<String, Object> td = asMap(treesDoc.get(t));
      int c = asInt(td.get("attribute"));
      need(c == net.m_Kept[t], "tree " + t + " is for attribute " + c + ", the structure keeps " + net.m_Kept[t]);
      need(td.get("name").equals(net.m_AttrNames[c]), "tree " + t + ": its name is not its attribute's");
      int card = asInt(td.get("cardinality"));
      need(card == net.m_Cardinalities[c] && card >= 1, "tree " + t + ": cardinality " + card + " does not match");
      int[] vars = ints(td.get("branching"));
      need(vars.length == net.m_Parents[c].length + 1 && vars[0] == -1
        && Arrays.equals(Arrays.copyOfRange(vars, 1, vars.length), net.m_Parents[c]),
        "tree " + t + ": branching order does not match the structure");
      int n = batches.get(t).get(0).length;
      need(n == asInt(td.get("nodes")) && n >= 1, "tree " + t + ": wrong number of nodes");
      net.m_TreeAttr[t] = c;
      net.m_TreeCard[t] = card;
      net.m_Branching[t] = vars;
      totalNodes += n;
      totalCells += batches.get(t).get(3).children.get(0).length;
      need(totalNodes < Integer.MAX_VALUE && totalCells < Integer.MAX_VALUE, "more nodes than this reader holds");
      net.m_TreeNodeStart[t + 1] = (int) totalNodes;
    }
    int nodes = (int) totalNodes;
    net.m_NodeParent = new int[nodes];
    net.m_NodeBranch = new int[nodes];
    net.m_ChildStart = new int[nodes];
    net.m_ChildCount = new int[nodes];
    net.m_LogBackoff = new double[nodes];
    net.m_CellStart = new int[nodes + 1];
    net.m_CellValue = new int[(int) totalCells];
    net.m_LogProb = new double[(int) totalCells];
    int cellOff = 0;
    for (int t = 0; t < nTrees; t++) {
      cellOff = readTree(net, t, batches.get(t), nClasses, backoffToParent, mle, cellOff,
        (Long) asMap(treesDoc.get(t)).get("cells"));
    }
    net.m_CellStart[nodes] = cellOff;
  }

  /**
   * Tree {@code t}'s nodes, checked as {@code _read_tables} checks them (in its order, so that both
   * readers name the same fault), copied into the network's arrays from its first node on; returns the
   * next cell offset.
   */
  private static int readTree(HDPModel.Network net, int t, List<Column> b, int nClasses, boolean backoffToParent,
      boolean mle, int cellOff, long cellsSaid) throws Corrupt {
    int card = net.m_TreeCard[t];
    int[] vars = net.m_Branching[t];
    int n = b.get(0).length;
    int[] branch = (int[]) ArrowFileReader.values(b.get(0));
    int[] children = (int[]) ArrowFileReader.values(b.get(1));
    double[] lb = (double[]) ArrowFileReader.values(b.get(2));
    Column cells = b.get(3);
    int[] offsets = cells.offsets;
    int[] values = (int[]) ArrowFileReader.values(cells.children.get(0).children.get(0));
    double[] lp = (double[]) ArrowFileReader.values(cells.children.get(0).children.get(1));
    String tree = "tree " + t;
    String at = tree + ", node ";
    // the shape: children add up, every node after its parent, breadth first, no deeper than the branching
    long sum = 0;
    for (int j = 0; j < n; j++) {
      need(children[j] >= 0, at, j, ": a negative number of children");
      sum += children[j];
    }
    need(sum == n - 1, tree, ": the nodes' children do not add up to its nodes");
    int[] parent = new int[n];
    parent[0] = -1;
    for (int j = 0, pos = 1; j < n; j++) {
      for (int k = 0; k < children[j]; k++) {
        parent[pos++] = j;
      }
    }
    for (int j = 1; j < n; j++) {
      need(parent[j] < j, tree, ": a node comes before its parent");
    }
    int[] depth = new int[n];
    for (int j = 1; j < n; j++) {
      depth[j] = depth[parent[j]] + 1;
      need(depth[j] <= vars.length, tree, ": deeper than its branching variables");
    }
    for (int j = 1; j < n; j++) {
      need(depth[j] >= depth[j - 1], tree, ": nodes not in breadth-first order");
    }
    need(branch[0] == 0, at + "0: a root's branch must be 0");
    for (int j = 1; j < n; j++) {
      int radix = depth[j] == 1 ? nClasses : net.m_Cardinalities[vars[depth[j] - 1]];
      need(branch[j] >= 0 && branch[j] < radix, at, j, ": branch value out of range");
    }
    for (int j = 2; j < n; j++) {
      need(parent[j] != parent[j - 1] || branch[j] > branch[j - 1], at, j, ": children not sorted by branch value");
    }
    // the cells: at least one a node, values in range and sorted, log-probabilities finite and at most 0
    for (int j = 0; j < n; j++) {
      need(offsets[j + 1] > offsets[j], at, j, ": a node without a cell");
    }
    for (int j = 0; j < n; j++) {
      for (int i = offsets[j]; i < offsets[j + 1]; i++) {
        need(values[i] >= 0 && values[i] < card, at, j, ": a cell's value out of range");
      }
    }
    for (int j = 0; j < n; j++) {
      for (int i = offsets[j] + 1; i < offsets[j + 1]; i++) {
        need(values[i] > values[i - 1], at, j, ": cells not sorted by value");
      }
    }
    for (int j = 0; j < n; j++) {
      for (int i = offsets[j]; i < offsets[j + 1]; i++) {
        need(Double.isFinite(lp[i]) && lp[i] <= 1e-9, at, j, ": a log-probability that is not finite and at most 0");
      }
    }
    for (int j = 0; j < n; j++) {
      need(!Double.isNaN(lb[j]) && lb[j] <= 0 && (mle || lb[j] != Double.NEGATIVE_INFINITY), at, j,
        ": a back-off weight outside (0, 1]");
    }
    // every node's distribution sums to one: its cells, plus its back-off weight times the share of its
    // back-off distribution that its cells' values do not take (HDP: its parent's, which has them all)
    double[] rest = new double[n];
    for (int j = 0; j < n; j++) {
      rest[j] = (card - (offsets[j + 1] - offsets[j])) / (double) card;
    }
    if (backoffToParent) {
      for (int j = 1; j < n; j++) {
        int p = parent[j];
        double share = 0;
        for (int i = offsets[j]; i < offsets[j + 1]; i++) {
          int found = Arrays.binarySearch(values, offsets[p], offsets[p + 1], values[i]);
          need(found >= 0, at, j, ": a cell its parent has not");
          share += Math.exp(lp[found]);
        }
        rest[j] = 1.0 - share;
      }
    }
    for (int j = 0; j < n; j++) {
      double total = 0;
      for (int i = offsets[j]; i < offsets[j + 1]; i++) {
        total += Math.exp(lp[i]);
      }
      need(Math.abs(total + Math.exp(lb[j]) * rest[j] - 1.0) <= 1e-6, at, j, ": its distribution does not sum to one");
    }
    need(offsets[n] == cellsSaid, tree, ": its cells are not the " + cellsSaid + " the document says");
    // into the network's arrays: children follow in breadth-first order, so node j's are a block
    int off = net.m_TreeNodeStart[t];
    for (int j = 0, next = 1; j < n; j++) {
      net.m_NodeParent[off + j] = parent[j] < 0 ? -1 : off + parent[j];
      net.m_NodeBranch[off + j] = branch[j];
      net.m_ChildStart[off + j] = off + next;
      net.m_ChildCount[off + j] = children[j];
      net.m_LogBackoff[off + j] = lb[j];
      net.m_CellStart[off + j] = cellOff + offsets[j];
      next += children[j];
    }
    System.arraycopy(values, 0, net.m_CellValue, cellOff, offsets[n]);
    System.arraycopy(lp, 0, net.m_LogProb, cellOff, offsets[n]);
    return cellOff + offsets[n];
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
