/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.Serializable;
import java.util.Locale;

/**
 * A fitted hdp-bnc model as plain serialisable arrays: what {@link ModelFile} reads from a model
 * file, and all that prediction needs (no Python, no daemon).
 *
 * <p>Attributes are the model's non-class attributes in training order; an attribute's codes are
 * {@code 0 .. values.length - 1} for its labels (bins for a discretised numeric attribute) and
 * {@code values.length} for missing. The model has a slot for missing only where training had
 * missing values ({@code cardinalities[a] == values.length + 1}).
 *
 * <p>Trees are stored as flat arrays, as in {@code hdp_plugin/hdp/trees.py}: node {@code j} of the
 * whole forest has the cells {@code nodeCellStart[j] .. nodeCellStart[j] + card - 1}, and, if it is
 * not a leaf, a block of child indices {@code childTable[nodeChildStart[j] + v]} ({@code -1} where no
 * training row went) for the values {@code v} of the variable it branches on: the class at depth 0,
 * then the tree's attribute parents in order.
 */
public final class HDPModel implements Serializable {

  private static final long serialVersionUID = 4180734468129032917L;

  // ---- attributes and class
  final String[] m_AttrNames;
  final String[][] m_AttrValues;
  final boolean[] m_AttrNumeric;
  /** cut points of numeric attributes (null for nominal ones) */
  final double[][] m_CutPoints;
  final String m_ClassName;
  final String[] m_ClassValues;
  /** the model's number of codes per attribute: labels, plus one if training had missing values */
  final int[] m_Cardinalities;
  final double[] m_ClassLogPrior;

  // ---- structure
  final String m_StructureKind;
  final int m_K;
  final int[] m_Kept;
  final int[][] m_Parents;

  // ---- trees
  final int[] m_TreeAttr;
  final int[] m_TreeCard;
  /** per tree, its first node; length trees + 1 */
  final int[] m_TreeNodeStart;
  /** per tree, its branching variables: -1 (the class) then attribute indices */
  final int[][] m_Branching;
  final int[] m_NodeParent;
  final int[] m_NodeDepth;
  final int[] m_NodeBranch;
  /** per node, first cell; length nodes + 1 */
  final int[] m_NodeCellStart;
  /** per node, start of its child block in m_ChildTable, or -1 for a leaf */
  final int[] m_NodeChildStart;
  final int[] m_ChildTable;
  final double[] m_LogProbs;
  final long[] m_Counts;
  final double[] m_NodeConcentration;

  // ---- provenance
  final String m_Estimator;
  final String m_Summary;
  final String m_PackageVersion;
  final long m_Rows;

  // ---- ensembles (model format 2.0, or 3.0 with members): this object is member 0's network, m_Members all members
  /** every member's network (member 0 first), or null for a single network */
  HDPModel[] m_Members;
  /** the members' weights (positive), or null for a single network */
  double[] m_Weights;

  HDPModel(String[] attrNames, String[][] attrValues, boolean[] attrNumeric, double[][] cutPoints,
    String className, String[] classValues, int[] cardinalities, double[] classLogPrior, String structureKind,
    int k, int[] kept, int[][] parents, int[] treeAttr, int[] treeCard, int[] treeNodeStart, int[][] branching,
    int[] nodeParent, int[] nodeDepth, int[] nodeBranch, int[] nodeCellStart, int[] nodeChildStart,
    int[] childTable, double[] logProbs, long[] counts, double[] nodeConcentration, String estimator,
    String summary, String packageVersion, long rows) {
    m_AttrNames = attrNames;
    m_AttrValues = attrValues;
    m_AttrNumeric = attrNumeric;
    m_CutPoints = cutPoints;
    m_ClassName = className;
    m_ClassValues = classValues;
    m_Cardinalities = cardinalities;
    m_ClassLogPrior = classLogPrior;
    m_StructureKind = structureKind;
    m_K = k;
    m_Kept = kept;
    m_Parents = parents;
    m_TreeAttr = treeAttr;
    m_TreeCard = treeCard;
    m_TreeNodeStart = treeNodeStart;
    m_Branching = branching;
    m_NodeParent = nodeParent;
    m_NodeDepth = nodeDepth;
    m_NodeBranch = nodeBranch;
    m_NodeCellStart = nodeCellStart;
    m_NodeChildStart = nodeChildStart;
    m_ChildTable = childTable;
    m_LogProbs = logProbs;
    m_Counts = counts;
    m_NodeConcentration = nodeConcentration;
    m_Estimator = estimator;
    m_Summary = summary;
    m_PackageVersion = packageVersion;
    m_Rows = rows;
  }

  /**
   * An ensemble: member 0's network, which describes and draws the model, holding every member.
   *
   * @param members the members' networks, member 0 first
   * @param weights their weights
   * @return the ensemble
   */
  static HDPModel ensemble(HDPModel[] members, double[] weights) {
    HDPModel m0 = members[0];
    HDPModel e = new HDPModel(m0.m_AttrNames, m0.m_AttrValues, m0.m_AttrNumeric, m0.m_CutPoints, m0.m_ClassName,
      m0.m_ClassValues, m0.m_Cardinalities, m0.m_ClassLogPrior, m0.m_StructureKind, m0.m_K, m0.m_Kept, m0.m_Parents,
      m0.m_TreeAttr, m0.m_TreeCard, m0.m_TreeNodeStart, m0.m_Branching, m0.m_NodeParent, m0.m_NodeDepth,
      m0.m_NodeBranch, m0.m_NodeCellStart, m0.m_NodeChildStart, m0.m_ChildTable, m0.m_LogProbs, m0.m_Counts,
      m0.m_NodeConcentration, m0.m_Estimator, m0.m_Summary, m0.m_PackageVersion, m0.m_Rows);
    e.m_Members = members.clone();
    e.m_Weights = weights.clone();
    return e;
  }

  /** @return the number of member networks: 1 for a single network */
  public int numMembers() {
    return m_Members == null ? 1 : m_Members.length;
  }

  /**
   * A member's network.
   *
   * @param e the member, 0 to {@link #numMembers()} - 1
   * @return its network (this model itself for a single network)
   */
  public HDPModel member(int e) {
    return m_Members == null ? this : m_Members[e];
  }

  /**
   * A member's weight.
   *
   * @param e the member
   * @return its weight (1 for a single network)
   */
  public double weight(int e) {
    return m_Weights == null ? 1.0 : m_Weights[e];
  }

  /** @return the number of non-class attributes */
  public int numAttributes() {
    return m_AttrNames.length;
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

  /** @return the attribute names, in training order */
  public String[] attributeNames() {
    return m_AttrNames.clone();
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

  /**
   * The deepest existing node of a tree along (y, parent values): prediction's back-off.
   *
   * @param tree the tree
   * @param y the class code
   * @param codes attribute codes of the row
   * @return the global node index
   */
  int deepestNode(int tree, int y, int[] codes) {
    int node = m_TreeNodeStart[tree];
    for (int v : m_Branching[tree]) {
      int val;
      if (v < 0) {
        val = y;
      } else {
        val = codes[v];
        if (val >= m_Cardinalities[v]) {
          break; // a parent value the model has no slot for: stop here
        }
      }
      int cs = m_NodeChildStart[node];
      if (cs < 0) {
        break;
      }
      int next = m_ChildTable[cs + val];
      if (next < 0) {
        break;
      }
      node = next;
    }
    return node;
  }

  /**
   * log P(y) + sum over trees of log P(x_c | deepest context of (y, parents)), for every class, as
   * {@code log_posterior_rows} in {@code hdp_plugin/hdp/predict.py}: a value the model has no slot for (unseen
   * in training, or missing where training had none) drops its attribute's factor.
   *
   * @param codes the row's attribute codes (missing = number of labels)
   * @return the unnormalised log-probabilities, one per class
   */
  public double[] logJoint(int[] codes) {
    int nClasses = m_ClassLogPrior.length;
    double[] out = new double[nClasses];
    for (int y = 0; y < nClasses; y++) {
      double s = m_ClassLogPrior[y];
      for (int t = 0; t < m_TreeAttr.length; t++) {
        int xc = codes[m_TreeAttr[t]];
        if (xc >= m_TreeCard[t]) {
          continue;
        }
        int node = deepestNode(t, y, codes);
        s += m_LogProbs[m_NodeCellStart[node] + xc];
      }
      out[y] = s;
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
      java.util.Arrays.fill(u, Math.exp(-Math.log(k)));
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

  /** @return the total number of tree nodes */
  public int numNodes() {
    return m_NodeParent.length;
  }

  /** @return the total number of cells (node, value) */
  public int numCells() {
    return m_LogProbs.length;
  }

  private boolean hasConcentrations() {
    for (double c : m_NodeConcentration) {
      if (!Double.isNaN(c)) {
        return true;
      }
    }
    return false;
  }

  /** ", min-max" of the concentrations of a tree's non-root nodes, or "" without HDP. */
  private String concentrationRange(int t) {
    double lo = Double.POSITIVE_INFINITY;
    double hi = Double.NEGATIVE_INFINITY;
    for (int j = m_TreeNodeStart[t] + 1; j < m_TreeNodeStart[t + 1]; j++) {
      double c = m_NodeConcentration[j];
      if (!Double.isNaN(c)) {
        lo = Math.min(lo, c);
        hi = Math.max(hi, c);
      }
    }
    return lo > hi ? "" : String.format(Locale.ROOT, ", %.3g-%.3g", lo, hi);
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

  /**
   * A description of the model: the structure, then per attribute its parents and tree size.
   *
   * @return the text
   */
  public String describe() {
    StringBuilder sb = new StringBuilder();
    if (m_Members != null) {
      sb.append(String.format(Locale.ROOT, "ESKDB ensemble of %d members, each an SkDB on its own attribute order "
        + "and cut points; it predicts the weighted mean of the members' class probabilities.%n", m_Members.length));
      sb.append("Members (selected attributes n*, parents k*, tree cells):");
      for (int e = 0; e < m_Members.length; e++) {
        HDPModel m = m_Members[e];
        sb.append(String.format(Locale.ROOT, "%s %d: n*=%d k*=%d %d", e % 5 == 0 ? String.format("%n ") : ";", e,
          m.m_Kept.length, m.m_K, m.numCells()));
      }
      sb.append(String.format(Locale.ROOT, "%n%nMember 0 (the network below and in the graph view):%n"));
    }
    sb.append(String.format(Locale.ROOT, "Structure: %s%s, %d of %d attributes kept%n", m_StructureKind,
      "kdb".equals(m_StructureKind) || "skdb".equals(m_StructureKind) ? " (k=" + m_K + ")" : "",
      m_Kept.length, m_AttrNames.length));
    sb.append("Estimator: ").append(m_Summary).append(String.format(Locale.ROOT, "%n"));
    sb.append(String.format(Locale.ROOT, "Trained on %d rows; %d tree nodes, %d table cells%n%n", m_Rows,
      numNodes(), numCells()));
    sb.append(String.format(Locale.ROOT, "Class %s: prior", m_ClassName));
    for (int y = 0; y < m_ClassValues.length; y++) {
      sb.append(String.format(Locale.ROOT, " %s=%.4f", m_ClassValues[y], Math.exp(m_ClassLogPrior[y])));
    }
    sb.append(String.format(Locale.ROOT, "%n%nNetwork (attribute <- class, parents) : values, tree nodes%s%n",
      hasConcentrations() ? ", concentrations below the root (min-max)" : ""));
    for (int t = 0; t < m_TreeAttr.length; t++) {
      int a = m_TreeAttr[t];
      StringBuilder ps = new StringBuilder(m_ClassName);
      for (int p : m_Parents[a]) {
        ps.append(", ").append(m_AttrNames[p]);
      }
      int nodes = m_TreeNodeStart[t + 1] - m_TreeNodeStart[t];
      String cuts = "";
      if (m_AttrNumeric[a] && m_CutPoints[a] != null) {
        cuts = ", " + m_CutPoints[a].length + " cut point" + (m_CutPoints[a].length == 1 ? "" : "s");
      }
      sb.append(String.format(Locale.ROOT, "  %s <- %s : %d%s, %d%s%n", m_AttrNames[a], ps, m_TreeCard[t], cuts,
        nodes, concentrationRange(t)));
    }
    StringBuilder disc = new StringBuilder();
    for (int a = 0; a < m_AttrNames.length; a++) {
      if (m_AttrNumeric[a] && m_CutPoints[a] != null) {
        disc.append(String.format(Locale.ROOT, "  %s: %s%n", m_AttrNames[a], m_CutPoints[a].length == 0
          ? "no cut point (one bin)" : java.util.Arrays.toString(m_CutPoints[a])));
      }
    }
    if (disc.length() > 0) {
      sb.append(String.format(Locale.ROOT, "%nCut points of the numeric attributes (v goes to the first bin with "
        + "v <= cut):%n")).append(disc);
    }
    if (m_TreeAttr.length < m_AttrNames.length) {
      sb.append("Not used (no improvement in the selection):");
      boolean[] used = new boolean[m_AttrNames.length];
      for (int a : m_TreeAttr) {
        used[a] = true;
      }
      for (int a = 0; a < used.length; a++) {
        if (!used[a]) {
          sb.append(' ').append(m_AttrNames[a]);
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
    java.util.Arrays.fill(treeOf, -1);
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
    java.util.List<Integer> chosen = new java.util.ArrayList<>();
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
   * The most nodes and bends a row of the drawing holds within {@link #DRAWN_WIDTH}: a node is about as
   * wide as its name (at most 8 pixels a character in Weka's font, and 12 of margin), and as wide as the widest.
   */
  int drawnRow() {
    int widest = drawnName(m_ClassName).length();
    for (int a : m_TreeAttr) {
      widest = Math.max(widest, drawnName(m_AttrNames[a]).length());
    }
    return Math.max(1, DRAWN_WIDTH / (8 * widest + 12));
  }

  /** The most nodes and edge bends in a row of Weka's layout of the class and the given trees. */
  static int widestRow(java.util.List<Integer> trees, int[][] parents, int[] level) {
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
   * The network in XML BIF 0.3, as Weka's {@code BayesNet.graph()} writes it, so that Weka's graph
   * visualiser draws it. Each table is the model's predictive distribution for every configuration
   * of (class, parents), backed off where a context was never seen; the first parent varies slowest.
   * For an ensemble this is member 0's network, and the network's name says so.
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
    int[] drawn = drawnTrees();
    int left = m_TreeAttr.length - drawn.length;
    // the nodes' names in the drawing: shortened, unless that makes two alike
    java.util.Map<String, Integer> uses = new java.util.HashMap<>();
    uses.merge(drawnName(m_ClassName), 1, Integer::sum);
    for (int t : drawn) {
      uses.merge(drawnName(m_AttrNames[m_TreeAttr[t]]), 1, Integer::sum);
    }
    String className = uses.get(drawnName(m_ClassName)) > 1 ? m_ClassName : drawnName(m_ClassName);
    String[] names = new String[m_AttrNames.length];
    int widest = className.length();
    for (int t : drawn) {
      String full = m_AttrNames[m_TreeAttr[t]];
      names[m_TreeAttr[t]] = uses.get(drawnName(full)) > 1 ? full : drawnName(full);
      widest = Math.max(widest, names[m_TreeAttr[t]].length());
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
    String name = m_Members == null ? relation
      : relation + " (ESKDB: member 0 of " + m_Members.length + ", the ensemble averages them all)";
    if (left > 0) {
      StringBuilder rest = new StringBuilder();
      boolean[] shown = new boolean[m_TreeAttr.length];
      for (int t : drawn) {
        shown[t] = true;
      }
      for (int t = 0; t < shown.length; t++) {
        if (!shown[t]) {
          rest.append(rest.length() == 0 ? "" : ", ").append(m_AttrNames[m_TreeAttr[t]]);
        }
      }
      name += "; drawn: the class and " + drawn.length + " of the " + m_TreeAttr.length
        + " attributes of the network (with all their parents, so the tables are exact), not drawn: " + rest;
    }
    sb.append("<NAME>").append(xml(name)).append("</NAME>\n");
    // positions: each node in the row of its longest path from the class, rows of the widest name
    int slot = 8 * widest + 24;
    int[] level = new int[m_AttrNames.length];
    int[] inRow = new int[m_TreeAttr.length + 2];
    String[] position = new String[m_AttrNames.length];
    for (int t : drawn) { // parents come first in drawn
      int a = m_TreeAttr[t];
      level[a] = 1;
      for (int p : m_Parents[a]) {
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
      int a = m_TreeAttr[t];
      sb.append("<VARIABLE TYPE=\"nature\">\n<NAME>").append(xml(names[a])).append("</NAME>\n");
      for (int c = 0; c < m_TreeCard[t]; c++) {
        sb.append("<OUTCOME>").append(xml(label(a, c))).append("</OUTCOME>\n");
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
    int[] codes = new int[m_AttrNames.length];
    for (int t : drawn) {
      int a = m_TreeAttr[t];
      int[] parents = m_Parents[a];
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
        radix[j + 1] = m_Cardinalities[parents[j]];
      }
      while (true) {
        for (int j = 0; j < parents.length; j++) {
          codes[parents[j]] = digit[j + 1];
        }
        int node = deepestNode(t, digit[0], codes);
        int cs = m_NodeCellStart[node];
        for (int c = 0; c < m_TreeCard[t]; c++) {
          sb.append(Math.exp(m_LogProbs[cs + c])).append(' ');
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
