package weka.gui.graphvisualizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import weka.classifiers.bayes.net.BIFReader;
import weka.classifiers.bayes.hdpbnc.HDPModel;
import weka.classifiers.bayes.hdpbnc.ModelFile;
import weka.classifiers.bayes.hdpbnc.NetworkDrawing;
import weka.classifiers.bayes.hdpbnc.TestFiles;
import weka.classifiers.bayes.hdpbnc.WideModels;

/**
 * "Visualize graph" as the Explorer draws it: Weka's graph visualiser reads the classifier's XML BIF and
 * lays it out itself (rows by the longest path from the class, a bend as wide as a node wherever an edge
 * skips a row), here on the golden models. Every drawing fits {@link NetworkDrawing#DRAWN_WIDTH} pixels with its
 * names at full size; what it leaves out is said by a node and the network's name; what it draws is the
 * network's exact distribution over the attributes drawn (each with all its parents).
 */
class GraphLayoutTest {

  /** A layout by Weka's engine: per row, how many nodes (attributes, the class, bends); the width in pixels. */
  static final class Layout {
    final Map<Integer, Integer> m_Rows = new TreeMap<>();
    int m_Width;
  }

  static Layout layout(String xml) throws Exception {
    GraphVisualizer gv = new GraphVisualizer();
    gv.readBIF(xml);
    CountDownLatch done = new CountDownLatch(1);
    ((HierarchicalBCEngine) gv.m_le).addLayoutCompleteEventListener(e -> done.countDown());
    gv.layoutGraph(); // as ClassifierPanel.visualizeBayesNet does
    assertTrue(done.await(60, TimeUnit.SECONDS), "no layout");
    Field f = GraphVisualizer.class.getDeclaredField("paddedNodeWidth");
    f.setAccessible(true);
    int node = f.getInt(gv);
    Layout out = new Layout();
    int minX = Integer.MAX_VALUE;
    int maxX = Integer.MIN_VALUE;
    for (GraphNode n : gv.m_nodes) {
      out.m_Rows.merge(n.y, 1, Integer::sum);
      minX = Math.min(minX, n.x);
      maxX = Math.max(maxX, n.x);
    }
    out.m_Width = maxX - minX + node;
    return out;
  }

  static Stream<String> models() {
    return Stream.of("weather-kdb1-hdp", "vote-kdb2-hdp", "diabetes-tan-mestimate", "diabetes-eskdb-hdp",
      "vote-eskdb-mestimate", "breast-coded-kdb2-hdp");
  }

  @ParameterizedTest
  @MethodSource("models")
  void theDrawingFitsItsWidthAndSaysWhatItLeavesOut(String name) throws Exception {
    HDPModel m = ModelFile.read(TestFiles.golden().resolve(name + ".hdpbnc"));
    String xml = NetworkDrawing.toXMLBIF(m, name);
    Layout l = layout(xml);
    int widest = l.m_Rows.values().stream().mapToInt(Integer::intValue).max().getAsInt();
    assertTrue(l.m_Width <= NetworkDrawing.DRAWN_WIDTH, name + ": " + l.m_Width + " pixels wide, rows " + l.m_Rows);
    assertTrue(widest <= Math.max(2, NetworkDrawing.DRAWN_WIDTH / 20), name + ": rows " + l.m_Rows);
    BIFReader net = new BIFReader().processString(xml);
    int drawn = NetworkDrawing.drawnTrees(m.member(0)).length;
    int all = m.member(0).numTrees();
    int left = all - drawn;
    assertEquals(drawn + 1 + (left > 0 ? 1 : 0), net.getNrOfNodes(), name);
    if (left > 0) {
      assertEquals("+" + left + " more", net.getNodeName(net.getNrOfNodes() - 1), name);
      assertTrue(xml.contains("; drawn: the class and " + drawn + " of the " + all + " attributes of the network"), xml);
    } else {
      assertFalse(xml.contains(" more</NAME>"), name);
    }
    // each attribute drawn has the class and its parents (all drawn), as in the model
    for (int n = 1; n < 1 + drawn; n++) {
      assertEquals(net.getNodeName(0), net.getNodeName(net.getParent(n, 0)), name);
    }
  }

  @Test
  void aSmallNetworkIsDrawnWholeWithItsNames() throws Exception {
    HDPModel m = ModelFile.read(TestFiles.golden().resolve("diabetes-tan-mestimate.hdpbnc"));
    String xml = NetworkDrawing.toXMLBIF(m, "diabetes");
    assertTrue(xml.contains("<NAME>diabetes</NAME>"), xml);
    BIFReader net = new BIFReader().processString(xml);
    assertEquals(m.numAttributes() + 1, net.getNrOfNodes());
    for (String a : m.attributeNames()) {
      assertTrue(xml.contains("<NAME>" + a + "</NAME>"), a);
    }
  }

  @Test
  void longNamesAreShortenedInTheDrawingOnly() {
    assertEquals("preg", NetworkDrawing.drawnName("preg"));
    assertEquals("physician-fee-fr", NetworkDrawing.drawnName("physician-fee-fr"));
    String s = NetworkDrawing.drawnName("export-administration-act-south-africa");
    assertEquals(NetworkDrawing.DRAWN_NAME, s.length());
    assertTrue(s.startsWith("export-adm") && s.endsWith("frica") && s.contains("\u2026"), s);
  }

  /**
   * kDB on attributes of 40 values: a table row per combination of class and parent values would make the
   * drawing of kDB-2 millions of numbers, and of kDB-4 hundreds of millions (more than a 2 GB heap); the
   * drawing leaves out the attributes whose tables are too large, says which, and stays small, and Weka's
   * visualiser reads it.
   */
  @Test
  void attributesOfTooLargeTablesAreLeftOutAndNamed() throws Exception {
    for (int k : new int[] {2, 4}) {
      HDPModel m = WideModels.kdb(6, 40, k);
      String xml = NetworkDrawing.toXMLBIF(m, "wide");
      assertTrue(xml.length() < 1_000_000, "kDB-" + k + ": " + xml.length() + " characters");
      int[] drawn = NetworkDrawing.drawnTrees(m.member(0));
      // a0 (no attribute parent: 80 numbers) and a1 (one parent: 3,200) are drawn; a2 on (128,000 and more) not
      assertEquals(2, drawn.length, "kDB-" + k);
      assertTrue(xml.contains("tables of more than " + NetworkDrawing.TABLE_NUMBERS + " numbers (a row per "
        + "combination of class and parent values) are not drawn: a2, a3, a4, a5"), xml.substring(0, 2000));
      BIFReader net = new BIFReader().processString(xml);
      assertEquals(2 + 1 + 1, net.getNrOfNodes());
      assertEquals("+4 more", net.getNodeName(net.getNrOfNodes() - 1));
      new BIFParser(xml, new java.util.ArrayList<>(), new java.util.ArrayList<>()).parse();
      layout(xml);
    }
    // a chain of tables of 3,200 numbers each: together at most DRAWN_NUMBERS
    HDPModel tan = WideModels.kdb(30, 40, 1);
    String xml = NetworkDrawing.toXMLBIF(tan, "chain");
    java.util.ArrayList<GraphNode> nodes = new java.util.ArrayList<>();
    new BIFParser(xml, nodes, new java.util.ArrayList<>()).parse();
    long numbers = 0;
    for (GraphNode n : nodes) {
      numbers += (long) n.probs.length * n.probs[0].length;
    }
    assertTrue(numbers <= NetworkDrawing.DRAWN_NUMBERS + 2 + 1, numbers + " numbers"); // + the class, "+N more"
    assertTrue(numbers > NetworkDrawing.DRAWN_NUMBERS - 3200, numbers + " numbers");
    assertTrue(xml.length() < 1_000_000, xml.length() + " characters");
  }
}
