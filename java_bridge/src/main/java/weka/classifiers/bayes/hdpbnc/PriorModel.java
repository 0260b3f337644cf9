/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.Serializable;
import java.util.Locale;

import weka.core.Instance;
import weka.core.Instances;

/**
 * The class prior alone, the m-estimate (n_y + 1/C) / (N + 1) that Python uses for every model's
 * prior: what HDPBayesNet predicts when the training data has fewer than two observed classes, where
 * there is nothing else to learn (and Python would refuse the job).
 */
public final class PriorModel implements Serializable {

  private static final long serialVersionUID = 2201776512347710532L;

  private final String[] m_Labels;
  private final double[] m_Counts;
  private final double[] m_Prior;

  /**
   * Counts the classes of the rows with a class.
   *
   * @param data the training data, class set
   */
  public PriorModel(Instances data) {
    int c = data.numClasses();
    m_Labels = new String[c];
    for (int y = 0; y < c; y++) {
      m_Labels[y] = data.classAttribute().value(y);
    }
    m_Counts = new double[c];
    double n = 0;
    for (Instance inst : data) {
      if (!inst.classIsMissing()) {
        m_Counts[(int) inst.classValue()]++;
        n++;
      }
    }
    m_Prior = new double[c];
    for (int y = 0; y < c; y++) {
      m_Prior[y] = (m_Counts[y] + 1.0 / c) / (n + 1.0);
    }
  }

  /**
   * The number of distinct class values among the rows with a class.
   *
   * @param data the data, class set
   * @return the count
   */
  public static int observedClasses(Instances data) {
    boolean[] seen = new boolean[data.numClasses()];
    int n = 0;
    for (Instance inst : data) {
      if (!inst.classIsMissing() && !seen[(int) inst.classValue()]) {
        seen[(int) inst.classValue()] = true;
        n++;
      }
    }
    return n;
  }

  /** @return the prior, in the class attribute's order */
  public double[] distribution() {
    return m_Prior.clone();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("Fewer than two classes observed in training: the model is the class "
      + "prior alone\n");
    for (int y = 0; y < m_Labels.length; y++) {
      sb.append(String.format(Locale.ROOT, "  %s: %.4f (%d rows)%n", m_Labels[y], m_Prior[y], (long) m_Counts[y]));
    }
    return sb.toString();
  }
}
