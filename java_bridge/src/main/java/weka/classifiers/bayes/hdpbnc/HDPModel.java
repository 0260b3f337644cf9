/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Locale;

/**
 * A fitted hdp-bnc model as plain serialisable arrays: what {@link ModelFile} reads from a model
 * file, and all that prediction needs (no Python, no daemon).
 *
 * <p>A model is a weighted list of networks ({@link Network}): one network of weight 1 for NB, TAN,
 * kDB and SkDB, ESKDB's members of weight 1/n each. It predicts the weighted mean of its networks'
 * normalised class probabilities; a model of one network predicts that network's probabilities.
 * The class, its log-prior and the estimator are the model's; everything else is each network's.
 */
public final class HDPModel implements Serializable {

  private static final long serialVersionUID = -6001914233906425011L;

  final String m_ClassName;
  final String[] m_ClassValues;
  final double[] m_ClassLogPrior;
  /** the networks, in file order */
  final Network[] m_Members;
  /** their weights: positive, summing to one */
  final double[] m_Weights;

  // ---- provenance
  final String m_Estimator;
  /** whether a node backs off to its parent (HDP) or straight to uniform (the baselines) */
  final boolean m_BackoffToParent;
  final String m_Summary;
  final String m_PackageVersion;
  final long m_Rows;

  HDPModel(String className, String[] classValues, double[] classLogPrior, Network[] members, double[] weights,
      String estimator, String summary, String packageVersion, long rows) {
    m_ClassName = className;
    m_ClassValues = classValues;
    m_ClassLogPrior = classLogPrior;
    m_Members = members;
    m_Weights = weights;
    m_Estimator = estimator;
    m_BackoffToParent = "hdp".equals(estimator);
    m_Summary = summary;
    m_PackageVersion = packageVersion;
    m_Rows = rows;
    for (Network n : members) {
      n.m_Model = this;
    }
  }

  /**
   * One network of a model: its attributes as it codes them (names, labels, cut points, cardinalities),
   * its structure, and its context trees as flat arrays over the nodes of all its trees, in file order
   * (a tree's nodes breadth first, as the file holds them).
   *
   * <p>Node {@code j} has the parent {@code nodeParent[j]} ({@code -1} for a root), was reached with
   * the branch value {@code nodeBranch[j]}, has its children at {@code childStart[j] ..
   * childStart[j] + childCount[j] - 1} (sorted by branch value), the log of its back-off weight
   * {@code logBackoff[j]}, and its observed cells at {@code cellStart[j] .. cellStart[j + 1] - 1}:
   * their values {@code cellValue} (sorted) and log-estimates {@code logProb}. The fields are set
   * once, by {@link ModelFile}.
   */
  public static final class Network implements Serializable {

    private static final long serialVersionUID = 3398265710348117246L;

    // ---- attributes (the model's non-class attributes in training order); code values.length is missing
    String[] m_AttrNames;
    String[][] m_AttrValues;
    boolean[] m_AttrNumeric;
    /** cut points of numeric attributes (null for nominal ones) */
    double[][] m_CutPoints;
    /** number of codes per attribute: labels, plus one if training had missing values */
    int[] m_Cardinalities;

    // ---- structure
    String m_StructureKind;
    int m_K;
    int[] m_Kept;
    int[][] m_Parents;
    /**
     * For an SkDB that took a smaller model than its best to stay within its table-cell cap: the best
     * model's attributes n*, parents k* and cells, and the cap; else null
     */
    long[] m_CellLimited;

    // ---- trees
    int[] m_TreeAttr;
    int[] m_TreeCard;
    /** per tree, its first node; length trees + 1 */
    int[] m_TreeNodeStart;
    /** per tree, its branching variables: -1 (the class) then attribute indices */
    int[][] m_Branching;
    /** per tree, the smallest and largest concentration below the root (HDP), or null */
    double[][] m_Concentrations;

    // ---- nodes
    int[] m_NodeParent;
    int[] m_NodeBranch;
    int[] m_ChildStart;
    int[] m_ChildCount;
    double[] m_LogBackoff;
    /** per node, its first cell; length nodes + 1 */
    int[] m_CellStart;

    // ---- cells
    int[] m_CellValue;
    double[] m_LogProb;

    /** the model it is a member of: the class, its log-prior, how nodes back off */
    HDPModel m_Model;

    Network() {
    }

    /** @return the number of non-class attributes */
    public int numAttributes() {
      return m_AttrNames.length;
    }

    /** @return the total number of tree nodes */
    public int numNodes() {
      return m_NodeParent.length;
    }

    /** @return the total number of observed cells */
    public int numCells() {
      return m_LogProb.length;
    }

    /**
     * Bin of a numeric value, Weka's rule: the first bin {@code j} with {@code v <= cut[j]}, else the
     * last; missing (NaN) gives the missing code {@code cut.length + 1}.
     *
     * @param attr the attribute
     * @param v the value
     * @return its code
     */
    public int bin(int attr, double v) {
      double[] cut = m_CutPoints[attr];
      if (Double.isNaN(v)) {
        return cut.length + 1;
      }
      int lo = 0;
      int hi = cut.length; // first index with v <= cut[index] (numpy searchsorted, side="left")
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (cut[mid] < v) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }

    /** The child of {@code node} with branch value {@code value} (a binary search), or -1. */
    private int child(int node, int value) {
      int lo = m_ChildStart[node];
      int hi = lo + m_ChildCount[node];
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        int b = m_NodeBranch[mid];
        if (b < value) {
          lo = mid + 1;
        } else if (b > value) {
          hi = mid;
        } else {
          return mid;
        }
      }
      return -1;
    }

    /**
     * The deepest existing node of a tree along (y, parent values): prediction's back-off to the
     * deepest context seen in training.
     *
     * @param tree the tree
     * @param y the class code
     * @param codes attribute codes of the row
     * @return the node
     */
    int deepestNode(int tree, int y, int[] codes) {
      int node = m_TreeNodeStart[tree];
      for (int v : m_Branching[tree]) {
        int val;
        int radix;
        if (v < 0) {
          val = y;
          radix = m_Model.m_ClassLogPrior.length;
        } else {
          val = codes[v];
          radix = m_Cardinalities[v];
          if (val >= radix) {
            break; // a parent value the model has no slot for: stop here
          }
        }
        // a node with a child for every value has them in value order (children are sorted and distinct)
        int next = m_ChildCount[node] == radix ? m_ChildStart[node] + val : child(node, val);
        if (next < 0) {
          break;
        }
        node = next;
      }
      return node;
    }

    /**
     * log theta(x | node): the node's cell of {@code x} (a binary search of its sorted values), else its
     * back-off weight times its back-off distribution's estimate: up the parents (HDP), or straight to
     * the uniform distribution (the baselines), the root's being uniform.
     *
     * @param node the node
     * @param x the value of the tree's attribute
     * @param card the tree's cardinality
     * @return the log-estimate
     */
    double logEstimate(int node, int x, int card) {
      double acc = 0.0;
      while (true) {
        int lo = m_CellStart[node];
        int hi = m_CellStart[node + 1];
        if (hi - lo == card) { // a cell for every value: the cells in value order
          return acc + m_LogProb[lo + x];
        }
        while (lo < hi) {
          int mid = (lo + hi) >>> 1;
          int v = m_CellValue[mid];
          if (v < x) {
            lo = mid + 1;
          } else if (v > x) {
            hi = mid;
          } else {
            return acc + m_LogProb[mid];
          }
        }
        acc += m_LogBackoff[node];
        int p = m_NodeParent[node];
        if (!m_Model.m_BackoffToParent || p < 0) {
          return acc - Math.log(card);
        }
        node = p;
      }
    }

    /**
     * log P(y) + sum over trees of log P(x_c | deepest context of (y, parents)), for every class, as
     * {@code log_posterior_rows} in {@code hdp_plugin/hdp/predict.py}: a value the network has no slot for
     * (unseen in training, or missing where training had none) drops its attribute's factor.
     *
     * @param codes the row's attribute codes (missing = number of labels)
     * @return the unnormalised log-probabilities, one per class
     */
    public double[] logJoint(int[] codes) {
      double[] out = m_Model.m_ClassLogPrior.clone();
      int[] node = new int[out.length];
      for (int t = 0; t < m_TreeAttr.length; t++) {
        addTree(t, codes, out, node);
      }
      return out;
    }

    /**
     * {@link #logJoint} of every row: tree by tree over all the rows, so that a tree's nodes and cells stay
     * in the cache while the rows use them (a row's terms are added in the same order, so each row's result
     * is exactly its {@code logJoint}).
     *
     * @param codes per row, its attribute codes
     * @return per row, the unnormalised log-probabilities of the classes
     */
    public double[][] logJoints(int[][] codes) {
      double[][] out = new double[codes.length][];
      for (int r = 0; r < out.length; r++) {
        out[r] = m_Model.m_ClassLogPrior.clone();
      }
      int[] node = new int[m_Model.m_ClassLogPrior.length];
      for (int t = 0; t < m_TreeAttr.length; t++) {
        for (int r = 0; r < out.length; r++) {
          addTree(t, codes[r], out[r], node);
        }
      }
      return out;
    }

    /**
     * Adds tree {@code t}'s log-estimate of the row's value to every class's sum (nothing if the value has
     * no slot).
     *
     * @param t the tree
     * @param codes the row's attribute codes
     * @param out the classes' sums
     * @param node scratch, one int per class
     */
    private void addTree(int t, int[] codes, double[] out, int[] node) {
      int nc = out.length;
      int xc = codes[m_TreeAttr[t]];
      int card = m_TreeCard[t];
      if (xc >= card) {
        return;
      }
      int[] branching = m_Branching[t];
      // deepestNode for every class at once: every tree branches on the class first (the reader checks
      // it), and below it every descent follows the row's parent values, so the classes advance side by
      // side, one depth at a time (their loads overlap); a descent that stopped at node n is held as ~n
      int root = m_TreeNodeStart[t];
      for (int y = 0; y < nc; y++) {
        int next = m_ChildCount[root] == nc ? m_ChildStart[root] + y : child(root, y);
        node[y] = next < 0 ? ~root : next;
      }
      for (int d = 1; d < branching.length; d++) {
        int v = branching[d];
        int val = codes[v];
        int radix = m_Cardinalities[v];
        if (val >= radix) {
          break; // a parent value the model has no slot for: every class stops here
        }
        for (int y = 0; y < nc; y++) {
          int n = node[y];
          if (n >= 0) {
            int next = m_ChildCount[n] == radix ? m_ChildStart[n] + val : child(n, val);
            node[y] = next < 0 ? ~n : next;
          }
        }
      }
      for (int y = 0; y < nc; y++) {
        int n = node[y];
        out[y] += logEstimate(n < 0 ? ~n : n, xc, card);
      }
    }

    /**
     * P(class | x), normalised in log space with log-sum-exp; uniform if no class has a finite
     * log-probability.
     *
     * @param codes the row's attribute codes
     * @return the class distribution
     */
    public double[] distribution(int[] codes) {
      return normalised(logJoint(codes));
    }

    /**
     * {@link #distribution} of every row, computed tree by tree over the rows ({@link #logJoints}).
     *
     * @param codes per row, its attribute codes
     * @return per row, the class distribution
     */
    public double[][] distributions(int[][] codes) {
      double[][] lp = logJoints(codes);
      for (int r = 0; r < lp.length; r++) {
        lp[r] = normalised(lp[r]);
      }
      return lp;
    }

    /**
     * Log-probabilities normalised with log-sum-exp (in place); uniform if none is finite.
     *
     * @param lp unnormalised log-probabilities
     * @return the distribution
     */
    private static double[] normalised(double[] lp) {
      double mx = Double.NEGATIVE_INFINITY;
      for (double v : lp) {
        if (v > mx) {
          mx = v;
        }
      }
      int k = lp.length;
      if (mx == Double.NEGATIVE_INFINITY) {
        double[] u = new double[k];
        Arrays.fill(u, Math.exp(-Math.log(k)));
        return u;
      }
      double s = 0.0;
      for (double v : lp) {
        s += Math.exp(v - mx);
      }
      double lse = mx + Math.log(s);
      for (int j = 0; j < k; j++) {
        lp[j] = Math.exp(lp[j] - lse);
      }
      return lp;
    }

    /** ", min-max" of the concentrations of a tree's nodes below the root, or "" without them. */
    String concentrationRange(int t) {
      double[] r = m_Concentrations == null ? null : m_Concentrations[t];
      return r == null ? "" : String.format(Locale.ROOT, ", %.3g-%.3g", r[0], r[1]);
    }

    /** @return the number of the network's context trees: the attributes it uses */
    public int numTrees() {
      return m_TreeAttr.length;
    }
  }

  /** @return the number of networks: 1 for NB, TAN, kDB and SkDB */
  public int numMembers() {
    return m_Members.length;
  }

  /** @return network {@code e} of the model, 0 to {@link #numMembers()} - 1 */
  public Network member(int e) {
    return m_Members[e];
  }

  /** @return the weight of network {@code e} (1 for a model of one network) */
  public double weight(int e) {
    return m_Weights[e];
  }

  /** @return the number of non-class attributes */
  public int numAttributes() {
    return m_Members[0].numAttributes();
  }

  /** @return the number of classes */
  public int numClasses() {
    return m_ClassValues.length;
  }

  /** @return the class labels, in the model's order (Weka's order for data trained from Weka) */
  public String[] classValues() {
    return m_ClassValues.clone();
  }

  /** @return the attribute names, in training order (every network has the same) */
  public String[] attributeNames() {
    return m_Members[0].m_AttrNames.clone();
  }

  /** @return the number of observed cells of all networks */
  public long numCells() {
    long n = 0;
    for (Network m : m_Members) {
      n += m.numCells();
    }
    return n;
  }

  /**
   * P(class | x): the weighted mean of the networks' class distributions, networks added in order and
   * the sum divided by the total weight; a model of one network gives that network's distribution.
   *
   * @param codes per network, the row's attribute codes as that network codes them (its own cut points)
   * @return the class distribution
   */
  public double[] distribution(int[][] codes) {
    if (m_Members.length == 1) {
      return m_Members[0].distribution(codes[0]);
    }
    double[][] p = new double[m_Members.length][];
    for (int e = 0; e < p.length; e++) {
      p[e] = m_Members[e].distribution(codes[e]);
    }
    return mean(p);
  }

  /**
   * {@link #distribution} of every row, each network computing all the rows at once
   * ({@link Network#distributions}: faster than row by row; the same figures).
   *
   * @param codes per network, per row, the row's attribute codes as that network codes them
   * @return per row, the class distribution
   */
  public double[][] distributions(int[][][] codes) {
    int rows = codes[0].length;
    double[][][] byNet = new double[m_Members.length][][];
    for (int e = 0; e < byNet.length; e++) {
      byNet[e] = m_Members[e].distributions(codes[e]);
    }
    double[][] out = new double[rows][];
    double[][] p = new double[m_Members.length][];
    for (int r = 0; r < rows; r++) {
      for (int e = 0; e < p.length; e++) {
        p[e] = byNet[e][r];
      }
      out[r] = m_Members.length == 1 ? p[0] : mean(p);
    }
    return out;
  }

  /**
   * The weighted mean of the networks' distributions of one row, networks added in order and the sum
   * divided by the total weight.
   *
   * @param p per network, its distribution
   * @return the mean
   */
  private double[] mean(double[][] p) {
    double[] out = new double[m_ClassValues.length];
    double total = 0.0;
    for (int e = 0; e < m_Members.length; e++) {
      double w = m_Weights[e];
      for (int y = 0; y < out.length; y++) {
        out[y] += w * p[e][y];
      }
      total += w;
    }
    for (int y = 0; y < out.length; y++) {
      out[y] /= total;
    }
    return out;
  }

  /**
   * A description of the model: the structure, then per attribute its parents and tree size; for a
   * model of several networks, a line per network, then network 0.
   *
   * @return the text
   */
  public String describe() {
    StringBuilder sb = new StringBuilder();
    if (m_Members.length > 1) {
      sb.append(String.format(Locale.ROOT, "ESKDB ensemble of %d members, each an SkDB on its own attribute order "
        + "and cut points; it predicts the weighted mean of the members' class probabilities.%n", m_Members.length));
      sb.append("Members (selected attributes n*, parents k*, observed cells):");
      for (int e = 0; e < m_Members.length; e++) {
        Network m = m_Members[e];
        sb.append(String.format(Locale.ROOT, "%s %d: n*=%d k*=%d %d", e % 5 == 0 ? String.format("%n ") : ";", e,
          m.m_Kept.length, m.m_K, m.numCells()));
      }
      sb.append(String.format(Locale.ROOT, "%n"));
      sb.append(cellCapNote());
      sb.append(String.format(Locale.ROOT, "%nMember 0 (the network below and in the graph view):%n"));
    }
    Network m = m_Members[0];
    String[] names = m.m_AttrNames;
    sb.append(String.format(Locale.ROOT, "Structure: %s%s, %d of %d attributes kept%n", m.m_StructureKind,
      "kdb".equals(m.m_StructureKind) || "skdb".equals(m.m_StructureKind) ? " (k=" + m.m_K + ")" : "",
      m.m_Kept.length, names.length));
    if (m_Members.length == 1) {
      sb.append(cellCapNote());
    }
    sb.append("Estimator: ").append(m_Summary).append(String.format(Locale.ROOT, "%n"));
    sb.append(String.format(Locale.ROOT, "Trained on %d rows; %d tree nodes, %d observed cells%n%n", m_Rows,
      m.numNodes(), m.numCells()));
    sb.append(String.format(Locale.ROOT, "Class %s: prior", m_ClassName));
    for (int y = 0; y < m_ClassValues.length; y++) {
      sb.append(String.format(Locale.ROOT, " %s=%.4f", m_ClassValues[y], Math.exp(m_ClassLogPrior[y])));
    }
    sb.append(String.format(Locale.ROOT, "%n%nNetwork (attribute <- class, parents) : values, tree nodes%s%n",
      m.m_Concentrations != null ? ", concentrations below the root (min-max)" : ""));
    for (int t = 0; t < m.m_TreeAttr.length; t++) {
      int a = m.m_TreeAttr[t];
      StringBuilder ps = new StringBuilder(m_ClassName);
      for (int p : m.m_Parents[a]) {
        ps.append(", ").append(names[p]);
      }
      int nodes = m.m_TreeNodeStart[t + 1] - m.m_TreeNodeStart[t];
      String cuts = "";
      if (m.m_AttrNumeric[a] && m.m_CutPoints[a] != null) {
        cuts = ", " + m.m_CutPoints[a].length + " cut point" + (m.m_CutPoints[a].length == 1 ? "" : "s");
      }
      sb.append(String.format(Locale.ROOT, "  %s <- %s : %d%s, %d%s%n", names[a], ps, m.m_TreeCard[t], cuts,
        nodes, m.concentrationRange(t)));
    }
    StringBuilder disc = new StringBuilder();
    for (int a = 0; a < names.length; a++) {
      if (m.m_AttrNumeric[a] && m.m_CutPoints[a] != null) {
        disc.append(String.format(Locale.ROOT, "  %s: %s%n", names[a], m.m_CutPoints[a].length == 0
          ? "no cut point (one bin)" : Arrays.toString(m.m_CutPoints[a])));
      }
    }
    if (disc.length() > 0) {
      sb.append(String.format(Locale.ROOT, "%nCut points of the numeric attributes (v goes to the first bin with "
        + "v <= cut):%n")).append(disc);
    }
    if (m.m_TreeAttr.length < names.length) {
      sb.append("Not used (no improvement in the selection):");
      boolean[] used = new boolean[names.length];
      for (int a : m.m_TreeAttr) {
        used[a] = true;
      }
      for (int a = 0; a < used.length; a++) {
        if (!used[a]) {
          sb.append(' ').append(names[a]);
        }
      }
      sb.append(String.format(Locale.ROOT, "%n"));
    }
    return sb.toString();
  }

  /** @return the number of network 0's context trees: the attributes it uses */
  public int numTrees() {
    return m_Members[0].numTrees();
  }

  /** @return the members whose SkDB took a smaller model than its best, to stay within its table-cell cap */
  public int[] cellLimitedMembers() {
    return java.util.stream.IntStream.range(0, m_Members.length).filter(e -> m_Members[e].m_CellLimited != null)
      .toArray();
  }

  /**
   * The line of {@link #describe} that says which networks took a smaller model than their best to stay
   * within their table-cell cap (as {@code hdp-bnc info} says it), or "" if none did.
   */
  String cellCapNote() {
    int[] limited = cellLimitedMembers();
    if (limited.length == 0) {
      return "";
    }
    if (m_Members.length == 1) {
      Network m = m_Members[0];
      long[] c = m.m_CellLimited;
      return String.format(Locale.ROOT, "Cell cap: the best model (%d attributes, k=%d) has %d table cells, "
        + "more than the cap of %d: this is the best within it (%d attributes, k=%d)%n", c[0], c[1], c[2], c[3],
        m.m_Kept.length, m.m_K);
    }
    java.util.TreeSet<Long> caps = new java.util.TreeSet<>();
    StringBuilder which = new StringBuilder();
    for (int e : limited) {
      caps.add(m_Members[e].m_CellLimited[3]);
      which.append(which.length() == 0 ? "" : ", ").append(e);
    }
    StringBuilder cap = new StringBuilder();
    for (long c : caps) {
      cap.append(cap.length() == 0 ? "" : " or ").append(c);
    }
    return String.format(Locale.ROOT, "Cell cap: %d of %d members took a smaller model than their best, to stay "
      + "within %s table cells each: member%s %s%n", limited.length, m_Members.length, cap,
      limited.length == 1 ? "" : "s", which);
  }
}
