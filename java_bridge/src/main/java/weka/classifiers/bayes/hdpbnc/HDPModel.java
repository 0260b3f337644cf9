/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
      for (int t = 0; t < m_TreeAttr.length; t++) {
        int xc = codes[m_TreeAttr[t]];
        int card = m_TreeCard[t];
        if (xc >= card) {
          continue;
        }
        for (int y = 0; y < out.length; y++) {
          out[y] += logEstimate(deepestNode(t, y, codes), xc, card);
        }
      }
      return out;
    }

    /**
     * P(class | x), normalised in log space with log-sum-exp; uniform if no class has a finite
     * log-probability.
     *
     * @param codes the row's attribute codes
     * @return the class distribution
     */
    public double[] distribution(int[] codes) {
      double[] lp = logJoint(codes);
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

    /**
     * The label of an attribute's code, "?" for the missing slot.
     *
     * @param attr the attribute
     * @param code its code
     * @return the label
     */
    String label(int attr, int code) {
      return code < m_AttrValues[attr].length ? m_AttrValues[attr][code] : "?";
    }

    /** ", min-max" of the concentrations of a tree's nodes below the root, or "" without them. */
    String concentrationRange(int t) {
      double[] r = m_Concentrations == null ? null : m_Concentrations[t];
      return r == null ? "" : String.format(Locale.ROOT, ", %.3g-%.3g", r[0], r[1]);
    }

    /**
     * The trees (as indices) the drawing shows: a set closed under parents, so that its tables are exactly
     * the network's distribution over those attributes, taken one at a time, the attribute that most others
     * have as a parent first (then the first in tree order), while every row of Weka's layout holds at most
     * {@link #drawnRow()} nodes and bends.
     *
     * @return the trees drawn, each after its parents'
     */
    public int[] drawnTrees() {
      int n = m_TreeAttr.length;
      int most = drawnRow();
      int[] treeOf = new int[m_AttrNames.length];
      Arrays.fill(treeOf, -1);
      for (int t = 0; t < n; t++) {
        treeOf[m_TreeAttr[t]] = t;
      }
      int[][] parents = new int[n][];
      int[] children = new int[n];
      for (int t = 0; t < n; t++) {
        int[] ps = m_Parents[m_TreeAttr[t]];
        parents[t] = new int[ps.length];
        for (int j = 0; j < ps.length; j++) {
          parents[t][j] = treeOf[ps[j]];
          if (parents[t][j] >= 0) {
            children[parents[t][j]]++;
          }
        }
      }
      int[] level = new int[n];
      boolean[] in = new boolean[n];
      List<Integer> chosen = new ArrayList<>();
      while (chosen.size() < n) {
        int best = -1;
        for (int t = 0; t < n; t++) {
          boolean ready = !in[t];
          for (int p : parents[t]) {
            ready &= p >= 0 && in[p];
          }
          if (ready && (best < 0 || children[t] > children[best])) {
            best = t;
          }
        }
        if (best < 0) {
          break;
        }
        level[best] = 1;
        for (int p : parents[best]) {
          level[best] = Math.max(level[best], level[p] + 1);
        }
        chosen.add(best);
        if (widestRow(chosen, parents, level) > most && chosen.size() > 1) {
          chosen.remove(chosen.size() - 1);
          break;
        }
        in[best] = true;
      }
      return chosen.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * The most nodes and bends a row of the drawing holds within {@link HDPModel#DRAWN_WIDTH}: a node is
     * about as wide as its name (at most 8 pixels a character in Weka's font, and 12 of margin), and as wide
     * as the widest.
     */
    int drawnRow() {
      int widest = drawnName(m_Model.m_ClassName).length();
      for (int a : m_TreeAttr) {
        widest = Math.max(widest, drawnName(m_AttrNames[a]).length());
      }
      return Math.max(1, DRAWN_WIDTH / (8 * widest + 12));
    }

    /** The most nodes and edge bends in a row of Weka's layout of the class and the given trees. */
    static int widestRow(List<Integer> trees, int[][] parents, int[] level) {
      int deepest = 0;
      for (int t : trees) {
        deepest = Math.max(deepest, level[t]);
      }
      int[] row = new int[deepest + 1];
      row[0] = 1; // the class
      for (int t : trees) {
        row[level[t]]++;
        for (int l = 1; l < level[t]; l++) { // the edge from the class
          row[l]++;
        }
        for (int p : parents[t]) {
          for (int l = level[p] + 1; l < level[t]; l++) {
            row[l]++;
          }
        }
      }
      int widest = 0;
      for (int r : row) {
        widest = Math.max(widest, r);
      }
      return widest;
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

  /**
   * A network of the model.
   *
   * @param e the network, 0 to {@link #numMembers()} - 1
   * @return it
   */
  public Network member(int e) {
    return m_Members[e];
  }

  /**
   * A network's weight.
   *
   * @param e the network
   * @return its weight (1 for a model of one network)
   */
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

  /** @return the class attribute's name */
  public String className() {
    return m_ClassName;
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
    double[] out = new double[m_ClassValues.length];
    double total = 0.0;
    for (int e = 0; e < m_Members.length; e++) {
      double w = m_Weights[e];
      double[] p = m_Members[e].distribution(codes[e]);
      for (int y = 0; y < out.length; y++) {
        out[y] += w * p[y];
      }
      total += w;
    }
    for (int y = 0; y < out.length; y++) {
      out[y] /= total;
    }
    return out;
  }

  /**
   * P(class | x) of a model of one network.
   *
   * @param codes the row's attribute codes
   * @return the class distribution
   * @throws IllegalStateException for a model of several networks, whose networks code a row each
   *           their own way ({@link #distribution(int[][])})
   */
  public double[] distribution(int[] codes) {
    if (m_Members.length != 1) {
      throw new IllegalStateException("a model of " + m_Members.length + " networks: give each its own codes");
    }
    return m_Members[0].distribution(codes);
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
      sb.append(String.format(Locale.ROOT, "%n%nMember 0 (the network below and in the graph view):%n"));
    }
    Network m = m_Members[0];
    String[] names = m.m_AttrNames;
    sb.append(String.format(Locale.ROOT, "Structure: %s%s, %d of %d attributes kept%n", m.m_StructureKind,
      "kdb".equals(m.m_StructureKind) || "skdb".equals(m.m_StructureKind) ? " (k=" + m.m_K + ")" : "",
      m.m_Kept.length, names.length));
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

  /**
   * The widest drawing, in pixels, wanted from Weka's graph visualiser (whose window opens 800 pixels
   * wide). It lays a network out in rows by the longest path from the class, every node as wide as the
   * widest name, and gives each edge that skips a row a bend in it as wide as a node: a drawing of N
   * attributes, each a child of the class, is at least N nodes wide.
   */
  public static final int DRAWN_WIDTH = 1000;

  /** Names longer than this are shortened in the drawing (every node is as wide as the widest name). */
  public static final int DRAWN_NAME = 16;

  /**
   * The trees of network 0 that the drawing shows ({@link Network#drawnTrees()}).
   *
   * @return the trees drawn, each after its parents'
   */
  public int[] drawnTrees() {
    return m_Members[0].drawnTrees();
  }

  /** @return the number of network 0's context trees: the attributes it uses */
  public int numTrees() {
    return m_Members[0].numTrees();
  }

  /**
   * A node's name in the drawing: names longer than {@link #DRAWN_NAME} keep their start and end.
   *
   * @param name the name
   * @return the name drawn
   */
  public static String drawnName(String name) {
    int cut = DRAWN_NAME - 6;
    return name.length() <= DRAWN_NAME ? name : name.substring(0, cut) + "\u2026" + name.substring(name.length() - 5);
  }

  /**
   * Network 0 in XML BIF 0.3, as Weka's {@code BayesNet.graph()} writes it, so that Weka's graph
   * visualiser draws it. Each table is the network's predictive distribution for every configuration
   * of (class, parents), backed off where a context was never seen; the first parent varies slowest.
   * For a model of several networks, the network's name says it is member 0.
   *
   * <p>So that the drawing stays legible at its natural size, it shows at most the attributes of
   * {@link #drawnTrees()} (the others' nodes would widen every row of Weka's layout), names longer than
   * {@link #DRAWN_NAME} characters shortened; a node "+N more" beside the class and the network's name
   * say what is left out. Positions (which Weka's Explorer recomputes) put each node in the row of its longest path
   * from the class.
   *
   * @param relation the network's name
   * @return the XML text
   */
  public String toXMLBIF(String relation) {
    Network m = m_Members[0];
    int[] drawn = m.drawnTrees();
    int left = m.m_TreeAttr.length - drawn.length;
    // the nodes' names in the drawing: shortened, unless that makes two alike
    Map<String, Integer> uses = new HashMap<>();
    uses.merge(drawnName(m_ClassName), 1, Integer::sum);
    for (int t : drawn) {
      uses.merge(drawnName(m.m_AttrNames[m.m_TreeAttr[t]]), 1, Integer::sum);
    }
    String className = uses.get(drawnName(m_ClassName)) > 1 ? m_ClassName : drawnName(m_ClassName);
    String[] names = new String[m.m_AttrNames.length];
    int widest = className.length();
    for (int t : drawn) {
      String full = m.m_AttrNames[m.m_TreeAttr[t]];
      names[m.m_TreeAttr[t]] = uses.get(drawnName(full)) > 1 ? full : drawnName(full);
      widest = Math.max(widest, names[m.m_TreeAttr[t]].length());
    }
    StringBuilder sb = new StringBuilder();
    sb.append("<?xml version=\"1.0\"?>\n");
    sb.append("<!-- DTD for the XMLBIF 0.3 format -->\n");
    sb.append("<!DOCTYPE BIF [\n");
    sb.append("\t<!ELEMENT BIF ( NETWORK )*>\n");
    sb.append("\t      <!ATTLIST BIF VERSION CDATA #REQUIRED>\n");
    sb.append("\t<!ELEMENT NETWORK ( NAME, ( PROPERTY | VARIABLE | DEFINITION )* )>\n");
    sb.append("\t<!ELEMENT NAME (#PCDATA)>\n");
    sb.append("\t<!ELEMENT VARIABLE ( NAME, ( OUTCOME |  PROPERTY )* ) >\n");
    sb.append("\t      <!ATTLIST VARIABLE TYPE (nature|decision|utility) \"nature\">\n");
    sb.append("\t<!ELEMENT OUTCOME (#PCDATA)>\n");
    sb.append("\t<!ELEMENT DEFINITION ( FOR | GIVEN | TABLE | PROPERTY )* >\n");
    sb.append("\t<!ELEMENT FOR (#PCDATA)>\n");
    sb.append("\t<!ELEMENT GIVEN (#PCDATA)>\n");
    sb.append("\t<!ELEMENT TABLE (#PCDATA)>\n");
    sb.append("\t<!ELEMENT PROPERTY (#PCDATA)>\n");
    sb.append("]>\n\n\n");
    sb.append("<BIF VERSION=\"0.3\">\n<NETWORK>\n");
    String name = m_Members.length == 1 ? relation
      : relation + " (ESKDB: member 0 of " + m_Members.length + ", the ensemble averages them all)";
    if (left > 0) {
      StringBuilder rest = new StringBuilder();
      boolean[] shown = new boolean[m.m_TreeAttr.length];
      for (int t : drawn) {
        shown[t] = true;
      }
      for (int t = 0; t < shown.length; t++) {
        if (!shown[t]) {
          rest.append(rest.length() == 0 ? "" : ", ").append(m.m_AttrNames[m.m_TreeAttr[t]]);
        }
      }
      name += "; drawn: the class and " + drawn.length + " of the " + m.m_TreeAttr.length
        + " attributes of the network (with all their parents, so the tables are exact), not drawn: " + rest;
    }
    sb.append("<NAME>").append(xml(name)).append("</NAME>\n");
    // positions: each node in the row of its longest path from the class, rows of the widest name
    int slot = 8 * widest + 24;
    int[] level = new int[m.m_AttrNames.length];
    int[] inRow = new int[m.m_TreeAttr.length + 2];
    String[] position = new String[m.m_AttrNames.length];
    for (int t : drawn) { // parents come first in drawn
      int a = m.m_TreeAttr[t];
      level[a] = 1;
      for (int p : m.m_Parents[a]) {
        level[a] = Math.max(level[a], level[p] + 1);
      }
      position[a] = "(" + (20 + slot * inRow[level[a]]++) + "," + (20 + 90 * level[a]) + ")";
    }
    sb.append("<VARIABLE TYPE=\"nature\">\n<NAME>").append(xml(className)).append("</NAME>\n");
    for (String v : m_ClassValues) {
      sb.append("<OUTCOME>").append(xml(v)).append("</OUTCOME>\n");
    }
    sb.append("<PROPERTY>position = (20,20)</PROPERTY>\n</VARIABLE>\n");
    for (int t : drawn) {
      int a = m.m_TreeAttr[t];
      sb.append("<VARIABLE TYPE=\"nature\">\n<NAME>").append(xml(names[a])).append("</NAME>\n");
      for (int c = 0; c < m.m_TreeCard[t]; c++) {
        sb.append("<OUTCOME>").append(xml(m.label(a, c))).append("</OUTCOME>\n");
      }
      sb.append("<PROPERTY>position = ").append(position[a]).append("</PROPERTY>\n</VARIABLE>\n");
    }
    String note = "+" + left + " more";
    if (left > 0) { // beside the class, with no edges: says in the drawing itself that it is partial
      sb.append("<VARIABLE TYPE=\"nature\">\n<NAME>").append(xml(note)).append("</NAME>\n");
      sb.append("<OUTCOME>see the network's name</OUTCOME>\n");
      sb.append("<PROPERTY>position = (").append(20 + slot).append(",20)</PROPERTY>\n</VARIABLE>\n");
    }
    sb.append("<DEFINITION>\n<FOR>").append(xml(className)).append("</FOR>\n<TABLE>\n");
    for (double lp : m_ClassLogPrior) {
      sb.append(Math.exp(lp)).append(' ');
    }
    sb.append("\n</TABLE>\n</DEFINITION>\n");
    int[] codes = new int[m.m_AttrNames.length];
    for (int t : drawn) {
      int a = m.m_TreeAttr[t];
      int card = m.m_TreeCard[t];
      int[] parents = m.m_Parents[a];
      sb.append("<DEFINITION>\n<FOR>").append(xml(names[a])).append("</FOR>\n");
      sb.append("<GIVEN>").append(xml(className)).append("</GIVEN>\n");
      for (int p : parents) {
        sb.append("<GIVEN>").append(xml(names[p])).append("</GIVEN>\n");
      }
      sb.append("<TABLE>\n");
      // odometer over (class, parents), the last varying fastest
      int[] digit = new int[parents.length + 1];
      int[] radix = new int[parents.length + 1];
      radix[0] = m_ClassValues.length;
      for (int j = 0; j < parents.length; j++) {
        radix[j + 1] = m.m_Cardinalities[parents[j]];
      }
      while (true) {
        for (int j = 0; j < parents.length; j++) {
          codes[parents[j]] = digit[j + 1];
        }
        int node = m.deepestNode(t, digit[0], codes);
        for (int c = 0; c < card; c++) {
          sb.append(Math.exp(m.logEstimate(node, c, card))).append(' ');
        }
        sb.append('\n');
        int j = digit.length - 1;
        while (j >= 0 && ++digit[j] == radix[j]) {
          digit[j] = 0;
          j--;
        }
        if (j < 0) {
          break;
        }
      }
      sb.append("</TABLE>\n</DEFINITION>\n");
    }
    if (left > 0) {
      sb.append("<DEFINITION>\n<FOR>").append(xml(note)).append("</FOR>\n<TABLE>\n1.0\n</TABLE>\n</DEFINITION>\n");
    }
    sb.append("</NETWORK>\n</BIF>\n");
    return sb.toString();
  }

  private static String xml(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;")
      .replace("'", "&apos;");
  }
}
