package weka.classifiers.bayes.hdpbnc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import weka.core.Attribute;
import weka.core.Instances;

/**
 * kDB models of many-valued nominal attributes, built in memory for tests of what a model of wide tables
 * costs (its drawing, what a trained classifier holds): attribute {@code i} has the attributes before it,
 * at most {@code k}, as parents, and each tree is its root alone, whose cells give every value the same
 * probability (prediction backs off to the root for every context).
 */
public final class WideModels {

  private WideModels() {
  }

  /**
   * @param attributes the number of attributes, named a0, a1, ...
   * @param values the values of each, v0, v1, ...
   * @param k the most attribute parents
   * @return a kDB model with two classes
   */
  public static HDPModel kdb(int attributes, int values, int k) {
    HDPModel.Network net = new HDPModel.Network();
    net.m_AttrNames = new String[attributes];
    net.m_AttrValues = new String[attributes][];
    net.m_AttrNumeric = new boolean[attributes];
    net.m_CutPoints = new double[attributes][];
    net.m_Cardinalities = new int[attributes];
    net.m_Parents = new int[attributes][];
    net.m_Branching = new int[attributes][];
    for (int a = 0; a < attributes; a++) {
      net.m_AttrNames[a] = "a" + a;
      net.m_AttrValues[a] = labels(values);
      net.m_Cardinalities[a] = values;
      int from = Math.max(0, a - k);
      net.m_Parents[a] = new int[a - from];
      net.m_Branching[a] = new int[a - from + 1];
      net.m_Branching[a][0] = -1;
      for (int p = from; p < a; p++) {
        net.m_Parents[a][a - 1 - p] = p;
        net.m_Branching[a][a - p] = p;
      }
    }
    net.m_StructureKind = "kdb";
    net.m_K = k;
    net.m_Kept = new int[attributes];
    net.m_TreeAttr = new int[attributes];
    net.m_TreeCard = new int[attributes];
    net.m_TreeNodeStart = new int[attributes + 1];
    for (int a = 0; a < attributes; a++) {
      net.m_Kept[a] = a;
      net.m_TreeAttr[a] = a;
      net.m_TreeCard[a] = values;
      net.m_TreeNodeStart[a + 1] = a + 1;
    }
    net.m_NodeParent = new int[attributes];
    Arrays.fill(net.m_NodeParent, -1);
    net.m_NodeBranch = new int[attributes];
    net.m_ChildStart = new int[attributes];
    net.m_ChildCount = new int[attributes];
    net.m_LogBackoff = new double[attributes];
    net.m_CellStart = new int[attributes + 1];
    net.m_CellValue = new int[attributes * values];
    net.m_LogProb = new double[attributes * values];
    for (int a = 0; a < attributes; a++) {
      net.m_ChildStart[a] = a + 1;
      net.m_CellStart[a + 1] = (a + 1) * values;
      for (int v = 0; v < values; v++) {
        net.m_CellValue[a * values + v] = v;
        net.m_LogProb[a * values + v] = -Math.log(values);
      }
    }
    return new HDPModel("class", new String[] {"no", "yes"}, new double[] {Math.log(0.5), Math.log(0.5)},
      new HDPModel.Network[] {net}, new double[] {1.0}, "hdp", "HDP (crafted in memory)", "0", 100);
  }

  /** @return a header of the model's attributes and its class, the class last */
  public static Instances header(HDPModel model) {
    ArrayList<Attribute> atts = new ArrayList<>();
    HDPModel.Network net = model.member(0);
    for (int a = 0; a < net.numAttributes(); a++) {
      atts.add(new Attribute(net.m_AttrNames[a], Arrays.asList(net.m_AttrValues[a])));
    }
    atts.add(new Attribute("class", List.of(model.classValues())));
    Instances header = new Instances("wide", atts, 0);
    header.setClassIndex(atts.size() - 1);
    return header;
  }

  private static String[] labels(int values) {
    String[] out = new String[values];
    for (int v = 0; v < values; v++) {
      out[v] = "v" + v;
    }
    return out;
  }
}
