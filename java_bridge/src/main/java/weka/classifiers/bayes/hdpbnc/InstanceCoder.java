/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import weka.core.Attribute;
import weka.core.Instance;
import weka.core.Instances;

/**
 * Turns Weka instances into the model's attribute codes, as {@code hdp_plugin/data/conform.py} and
 * {@code apply_cut_points} do in Python: attributes are matched by name; nominal labels map by name
 * and a label never seen in training becomes the missing code; numeric values are cut with the
 * stored cut points (Weka's rule, the first bin {@code j} with {@code v <= cut[j]}); a number on a
 * nominal training attribute matches the label that reads as the same number (so a numeric Weka
 * attribute classifies on a model trained with the column declared categorical, whose labels are the
 * integer codes), as does a nominal label that is not a training label ({@code 3.0} matches {@code 3});
 * a nominal label on a numeric training attribute is read as a number; labels read as numbers by one rule
 * ({@link #labelNumber}); a date's clock time is taken as UTC ({@link #utcMillis}).
 */
public final class InstanceCoder implements Serializable {

  private static final long serialVersionUID = -3164409954931781227L;

  private final HDPModel m_Model;
  /** per network of the model: its coder (networks cut numeric attributes each their own way) */
  private final NetworkCoder[] m_Coders;

  /**
   * Builds the mapping from a Weka header onto a model's attributes.
   *
   * @param model the model
   * @param header the data's header (its class attribute, if any, is not used)
   * @throws IllegalArgumentException naming the model attributes the header lacks
   */
  public InstanceCoder(HDPModel model, Instances header) {
    m_Model = model;
    m_Coders = new NetworkCoder[model.numMembers()];
    for (int e = 0; e < m_Coders.length; e++) {
      m_Coders[e] = new NetworkCoder(model.member(e), header);
    }
  }

  /** The codes of one network. */
  private static final class NetworkCoder implements Serializable {

    private static final long serialVersionUID = 5126960440155129370L;

    private final HDPModel.Network m_Net;
    /** per model attribute: its index in the Weka header */
    private final int[] m_WekaIndex;
    /** per model attribute, for nominal Weka attributes: Weka value index to model code */
    private final int[][] m_Lookup;
    /** per model attribute, for numeric Weka attributes on nominal model attributes: number to code */
    private final ArrayList<HashMap<Double, Integer>> m_ByNumber;

    NetworkCoder(HDPModel.Network net, Instances header) {
      m_Net = net;
      int n = net.numAttributes();
      m_WekaIndex = new int[n];
      m_Lookup = new int[n][];
      m_ByNumber = new ArrayList<>(java.util.Collections.nCopies(n, (HashMap<Double, Integer>) null));
      List<String> absent = new ArrayList<>();
      for (int a = 0; a < n; a++) {
        String name = net.m_AttrNames[a];
        Attribute att = header.attribute(name);
        if (att == null || (header.classIndex() >= 0 && att.index() == header.classIndex())) {
          absent.add(name);
          continue;
        }
        m_WekaIndex[a] = att.index();
        String[] labels = net.m_AttrValues[a];
        boolean modelNumeric = net.m_AttrNumeric[a];
        if (att.isNominal() || att.isString()) {
          int[] lut = new int[att.numValues()];
          Map<String, Integer> index = new HashMap<>();
          for (int i = 0; i < labels.length; i++) {
            index.putIfAbsent(labels[i], i);
          }
          HashMap<Double, Integer> byNumber = null;
          for (int v = 0; v < lut.length; v++) {
            if (modelNumeric) {
              lut[v] = -1; // read the label as a number, then cut it
            } else {
              Integer code = index.get(att.value(v));
              if (code == null) { // not a training label: the label of the same number, if any
                if (byNumber == null) {
                  byNumber = byNumber(labels);
                }
                Double x = labelNumber(att.value(v));
                code = x == null ? null : byNumber.get(x == 0.0 ? 0.0 : x);
              }
              lut[v] = code == null ? labels.length : code;
            }
          }
          m_Lookup[a] = lut;
        } else if (att.isNumeric() && !modelNumeric) {
          m_ByNumber.set(a, byNumber(labels));
        } else if (!att.isNumeric()) {
          throw new IllegalArgumentException("attribute '" + name + "' has a type the model cannot use: "
            + Attribute.typeToString(att));
        }
      }
      if (!absent.isEmpty()) {
        throw new IllegalArgumentException("the data lacks attribute(s) the model needs: " + absent);
      }
    }

    int[] codes(Instance inst) {
      int n = m_WekaIndex.length;
      int[] out = new int[n];
      for (int a = 0; a < n; a++) {
        int w = m_WekaIndex[a];
        int missing = m_Net.m_AttrValues[a].length;
        if (inst.isMissing(w)) {
          out[a] = missing;
          continue;
        }
        double v = inst.value(w);
        if (m_Lookup[a] != null) {
          int code = m_Lookup[a][(int) v];
          if (code < 0) { // nominal label on a numeric training attribute
            Double read = labelNumber(inst.attribute(w).value((int) v));
            double x = read == null ? Double.NaN : read;
            code = m_Net.bin(a, x);
          }
          out[a] = code;
        } else if (m_ByNumber.get(a) != null) {
          Integer code = m_ByNumber.get(a).get(v == 0.0 ? 0.0 : v); // -0.0 reads as 0.0
          out[a] = code == null ? missing : code;
        } else {
          out[a] = m_Net.bin(a, utcMillis(inst.attribute(w), v));
        }
      }
      return out;
    }
  }

  /** The first code of each number a label reads as (labels that are not numbers left out). */
  private static HashMap<Double, Integer> byNumber(String[] labels) {
    HashMap<Double, Integer> out = new HashMap<>();
    for (int i = 0; i < labels.length; i++) {
      Double x = labelNumber(labels[i]);
      if (x != null) {
        out.putIfAbsent(x == 0.0 ? 0.0 : x, i); // -0 reads as 0
      }
    }
    return out;
  }

  /**
   * A Weka value as hdp_plugin reads it: a date's clock time taken as UTC (docs/model-format.md section 4b),
   * whatever the JVM's time zone. Weka parses a date without a zone in the JVM's zone; its text, written
   * back in that zone and read in UTC, is what hdp_plugin reads from the same ARFF file (a date with a zone
   * is the same instant either way). Any other value is itself.
   *
   * @param att the value's attribute
   * @param v the value (NaN: missing)
   * @return the value, a date as milliseconds since 1970-01-01 of its clock time in UTC
   */
  static double utcMillis(Attribute att, double v) {
    if (!att.isDate() || Double.isNaN(v)) {
      return v;
    }
    java.text.SimpleDateFormat utc = new java.text.SimpleDateFormat(att.getDateFormat());
    utc.setTimeZone(java.util.TimeZone.getTimeZone("UTC"));
    try {
      return utc.parse(att.formatDate(v)).getTime();
    } catch (java.text.ParseException e) {
      return v; // cannot happen: the attribute's own text in its own pattern
    }
  }

  /** The labels that read as numbers (docs/model-format.md section 6): ASCII decimal literals, nothing around them. */
  private static final Pattern NUMBER = Pattern.compile("[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?");

  /**
   * The number a label reads as, or null: an optional sign, ASCII digits with an optional fraction, an
   * optional exponent, and nothing else (no space, {@code d} or {@code f} suffix, hexadecimal, infinity,
   * NaN or non-ASCII digit), of a finite value; as hdp_plugin's {@code label_number} reads it.
   *
   * @param label the label
   * @return its number, or null
   */
  static Double labelNumber(String label) {
    if (!NUMBER.matcher(label).matches()) {
      return null;
    }
    double x = Double.parseDouble(label);
    return Double.isFinite(x) ? x : null;
  }

  /**
   * The class distribution of an instance, in the model's class order: the weighted mean of the
   * networks' distributions, each network coding the row its own way.
   *
   * @param inst the instance
   * @return the distribution
   */
  public double[] distribution(Instance inst) {
    int[][] codes = new int[m_Coders.length][];
    for (int e = 0; e < codes.length; e++) {
      codes[e] = m_Coders[e].codes(inst);
    }
    return m_Model.distribution(codes);
  }

  /**
   * The class distributions of the instances {@code from} to {@code to - 1}, computed together
   * ({@link HDPModel#distributions}); each is what {@link #distribution(Instance)} gives.
   *
   * @param insts the instances
   * @param from the first row
   * @param to one past the last row
   * @return per row, the distribution
   */
  public double[][] distributions(Instances insts, int from, int to) {
    int[][][] codes = new int[m_Coders.length][to - from][];
    for (int e = 0; e < codes.length; e++) {
      for (int r = from; r < to; r++) {
        codes[e][r - from] = m_Coders[e].codes(insts.instance(r));
      }
    }
    return m_Model.distributions(codes);
  }

  /**
   * Maps the model's class order onto the Weka class attribute's values.
   *
   * @param classAttribute the Weka class attribute
   * @return for each Weka class value, the model's class index, or -1 if the model does not know it
   */
  public int[] classMap(Attribute classAttribute) {
    int[] out = new int[classAttribute.numValues()];
    String[] cv = m_Model.m_ClassValues;
    for (int w = 0; w < out.length; w++) {
      out[w] = -1;
      for (int y = 0; y < cv.length; y++) {
        if (cv[y].equals(classAttribute.value(w))) {
          out[w] = y;
          break;
        }
      }
    }
    return out;
  }
}
