/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import weka.classifiers.bayes.hdpbnc.HDPModel.Network;

/**
 * A model's network 0 drawn for Weka's graph visualiser: which of its trees fit a legible drawing, the
 * nodes' names and positions, and the network in XML BIF 0.3 with its predictive tables.
 */
public final class NetworkDrawing {

  private NetworkDrawing() {
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
   * The most numbers the drawn tables may have: a table has a row for every configuration of the class and
   * the attribute's parents, so a small model of many values could otherwise ask for gigabytes of text.
   */
  public static final int MAX_DRAWN_ENTRIES = 1 << 22;

  /** A network whose tables are too large to draw; the message says so in one line. */
  public static final class TooLargeToDraw extends Exception {
    private static final long serialVersionUID = 1L;

    TooLargeToDraw(String message) {
      super(message);
    }
  }

  /** A node's name in the drawing: names longer than {@link #DRAWN_NAME} keep their start and end. */
  public static String drawnName(String name) {
    int cut = DRAWN_NAME - 6;
    return name.length() <= DRAWN_NAME ? name : name.substring(0, cut) + "\u2026" + name.substring(name.length() - 5);
  }

  /**
   * The most numbers one node's table in the drawing holds: a row per combination of the class's and the
   * parents' values, a number per value of the attribute. An attribute whose table would hold more is not
   * drawn (nor are the attributes that have it as a parent); the drawing's name says so.
   */
  public static final long TABLE_NUMBERS = 10_000;

  /**
   * The most numbers all the tables of the drawing hold together, so that its tables stay under a megabyte
   * of text whatever the model: Weka's Explorer asks for the drawing after every training and keeps it with
   * the result.
   */
  public static final long DRAWN_NUMBERS = 40_000;

  /**
   * The numbers of a tree's table in the drawing: classes times the parents' cardinalities times its own
   * cardinality, or {@link Long#MAX_VALUE} if that is larger.
   */
  static long tableNumbers(Network net, int t) {
    long n = (long) net.m_Model.m_ClassValues.length * net.m_TreeCard[t];
    for (int p : net.m_Parents[net.m_TreeAttr[t]]) {
      int card = net.m_Cardinalities[p];
      if (n > Long.MAX_VALUE / Math.max(1, card)) {
        return Long.MAX_VALUE;
      }
      n *= card;
    }
    return n;
  }

  /**
   * The trees (as indices) the drawing shows: a set closed under parents, so that its tables are exactly
   * the network's distribution over those attributes, taken one at a time, the attribute that most others
   * have as a parent first (then the first in tree order), while every row of Weka's layout holds at most
   * {@link #drawnRow} nodes and bends, no table holds more than {@link #TABLE_NUMBERS} numbers and all
   * together no more than {@link #DRAWN_NUMBERS}.
   *
   * @param net the network
   * @return the trees drawn, each after its parents'
   */
  public static int[] drawnTrees(Network net) {
    int n = net.m_TreeAttr.length;
    int most = drawnRow(net);
    int[] treeOf = new int[net.m_AttrNames.length];
    Arrays.fill(treeOf, -1);
    for (int t = 0; t < n; t++) {
      treeOf[net.m_TreeAttr[t]] = t;
    }
    int[][] parents = new int[n][];
    int[] children = new int[n];
    for (int t = 0; t < n; t++) {
      int[] ps = net.m_Parents[net.m_TreeAttr[t]];
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
    long numbers = 0;
    List<Integer> chosen = new ArrayList<>();
    while (chosen.size() < n) {
      int best = -1;
      for (int t = 0; t < n; t++) {
        boolean ready = !in[t];
        for (int p : parents[t]) {
          ready &= p >= 0 && in[p];
        }
        long size = ready ? tableNumbers(net, t) : 0;
        ready &= size <= TABLE_NUMBERS && size <= DRAWN_NUMBERS - numbers;
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
      numbers += tableNumbers(net, best);
    }
    return chosen.stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * The most nodes and bends a row of the drawing holds within {@link #DRAWN_WIDTH}: a node is
   * about as wide as its name (at most 8 pixels a character in Weka's font, and 12 of margin), and as wide
   * as the widest.
   */
  static int drawnRow(Network net) {
    int widest = drawnName(net.m_Model.m_ClassName).length();
    for (int a : net.m_TreeAttr) {
      widest = Math.max(widest, drawnName(net.m_AttrNames[a]).length());
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

  /** The label of an attribute's code, "?" for the missing slot. */
  private static String label(Network net, int attr, int code) {
    return code < net.m_AttrValues[attr].length ? net.m_AttrValues[attr][code] : "?";
  }

  /**
   * Network 0 in XML BIF 0.3, as Weka's {@code BayesNet.graph()} writes it, so that Weka's graph
   * visualiser draws it. Each table is the network's predictive distribution for every configuration
   * of (class, parents), backed off where a context was never seen; the first parent varies slowest.
   * For a model of several networks, the network's name says it is member 0.
   *
   * <p>So that the drawing stays legible at its natural size, and small, it shows at most the attributes of
   * {@link #drawnTrees} (the others' nodes would widen every row of Weka's layout, their tables fill the
   * Explorer's memory), names longer than {@link #DRAWN_NAME} characters shortened; a node "+N more" beside
   * the class and the network's name say what is left out, and which attributes' tables are too large.
   * The text is built from the model each time it is asked for; the classifier keeps none. Positions (which
   * Weka's Explorer recomputes) put each node in the row of its longest path from the class.
   *
   * @param model the model
   * @param relation the network's name
   * @return the XML text
   * @throws TooLargeToDraw when the drawn tables would have more than {@link #MAX_DRAWN_ENTRIES} numbers
   */
  public static String toXMLBIF(HDPModel model, String relation) throws TooLargeToDraw {
    Network m = model.m_Members[0];
    int[] drawn = drawnTrees(m);
    double entries = 0; // every drawn table: a row per (class, parents) configuration, a number per value
    for (int t : drawn) {
      double rows = model.m_ClassValues.length;
      for (int p : m.m_Parents[m.m_TreeAttr[t]]) {
        rows *= m.m_Cardinalities[p];
      }
      entries += rows * m.m_TreeCard[t];
    }
    if (entries > MAX_DRAWN_ENTRIES) {
      throw new TooLargeToDraw(String.format(Locale.ROOT, "the network's tables have %.0f entries, more than the %d "
        + "a drawing shows (a row for every value of the class and an attribute's parents); its text output "
        + "describes it", entries, MAX_DRAWN_ENTRIES));
    }
    int left = m.m_TreeAttr.length - drawn.length;
    // the nodes' names in the drawing: shortened, unless that makes two alike
    Map<String, Integer> uses = new HashMap<>();
    uses.merge(drawnName(model.m_ClassName), 1, Integer::sum);
    for (int t : drawn) {
      uses.merge(drawnName(m.m_AttrNames[m.m_TreeAttr[t]]), 1, Integer::sum);
    }
    String className = uses.get(drawnName(model.m_ClassName)) > 1 ? model.m_ClassName : drawnName(model.m_ClassName);
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
    String name = model.m_Members.length == 1 ? relation
      : relation + " (ESKDB: member 0 of " + model.m_Members.length + ", the ensemble averages them all)";
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
      StringBuilder large = new StringBuilder();
      for (int t = 0; t < shown.length; t++) {
        if (!shown[t] && tableNumbers(m, t) > TABLE_NUMBERS) {
          large.append(large.length() == 0 ? "" : ", ").append(m.m_AttrNames[m.m_TreeAttr[t]]);
        }
      }
      if (large.length() > 0) {
        name += "; tables of more than " + TABLE_NUMBERS + " numbers (a row per combination of class and parent "
          + "values) are not drawn: " + large;
      }
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
    for (String v : model.m_ClassValues) {
      sb.append("<OUTCOME>").append(xml(v)).append("</OUTCOME>\n");
    }
    sb.append("<PROPERTY>position = (20,20)</PROPERTY>\n</VARIABLE>\n");
    for (int t : drawn) {
      int a = m.m_TreeAttr[t];
      sb.append("<VARIABLE TYPE=\"nature\">\n<NAME>").append(xml(names[a])).append("</NAME>\n");
      for (int c = 0; c < m.m_TreeCard[t]; c++) {
        sb.append("<OUTCOME>").append(xml(label(m, a, c))).append("</OUTCOME>\n");
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
    for (double lp : model.m_ClassLogPrior) {
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
      radix[0] = model.m_ClassValues.length;
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
