/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 *
 *   This program is distributed in the hope that it will be useful,
 *   but WITHOUT ANY WARRANTY; without even the implied warranty of
 *   MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 *   GNU General Public License for more details.
 *
 *   You should have received a copy of the GNU General Public License
 *   along with this program.  If not, see <http://www.gnu.org/licenses/>.
 */

/*
 *    HDPBayesNet.java
 */

package weka.classifiers.bayes;

import java.io.File;
import java.nio.file.Path;
import java.nio.file.Paths;

import weka.classifiers.AbstractClassifier;
import weka.classifiers.bayes.hdpbnc.HDPModel;
import weka.classifiers.bayes.hdpbnc.InstanceCoder;
import weka.classifiers.bayes.hdpbnc.ModelFile;
import weka.classifiers.bayes.hdpbnc.PriorModel;
import weka.classifiers.bayes.hdpbnc.SpoolClient;
import weka.core.Capabilities;
import weka.core.Capabilities.Capability;
import weka.core.Drawable;
import weka.core.Instance;
import weka.core.Instances;
import weka.core.OptionMetadata;
import weka.core.Randomizable;
import weka.core.RevisionUtils;
import weka.core.SelectedTag;
import weka.core.Tag;
import weka.core.TechnicalInformation;
import weka.core.TechnicalInformation.Field;
import weka.core.TechnicalInformation.Type;
import weka.core.TechnicalInformationHandler;

/**
 * <!-- globalinfo-start -->
 * Bayesian network classifiers (naive Bayes, TAN, kDB-k, selective kDB) whose conditional probability
 * tables are estimated with a hierarchical Dirichlet process (HDP) and a collapsed Gibbs sampler. Each
 * table is smoothed towards its less specific contexts, which keeps high-order kDB models accurate where
 * plain frequency estimates overfit. Numeric attributes are discretised with MDL (Fayyad and Irani);
 * missing values are one more value.<br>
 * <br>
 * Training runs in the hdp-bnc Python daemon (install it with: python3 -m pip install hdp-plugin); the
 * learnt tables are then held in Java, so a saved model predicts without Python.<br>
 * <br>
 * For more information see:<br>
 * <br>
 * Francois Petitjean, Wray Buntine, Geoffrey I. Webb, Nayyar Zaidi (2018). Accurate parameter
 * estimation for Bayesian network classifiers using hierarchical Dirichlet processes. Machine Learning.
 * 107(8-10):1303-1331.
 * <p>
 * <!-- globalinfo-end -->
 *
 * <!-- technical-bibtex-start -->
 * BibTeX:
 * <pre>
 * &#64;article{Petitjean2018,
 *    author = {Francois Petitjean and Wray Buntine and Geoffrey I. Webb and Nayyar Zaidi},
 *    journal = {Machine Learning},
 *    number = {8-10},
 *    pages = {1303-1331},
 *    title = {Accurate parameter estimation for Bayesian network classifiers using hierarchical Dirichlet processes},
 *    volume = {107},
 *    year = {2018}
 * }
 * </pre>
 * <p>
 * <!-- technical-bibtex-end -->
 *
 * Options: see {@link #listOptions()}; every option is a bean property with {@link OptionMetadata}.
 */
public class HDPBayesNet extends AbstractClassifier implements Randomizable, TechnicalInformationHandler,
  Drawable {

  private static final long serialVersionUID = -5861428153749318275L;

  /** Environment variable that names the Python executable when the option is left at its default. */
  public static final String PYTHON_ENV = "HDP_BNC_PYTHON";
  /** Environment variable that names the spool directory when the option is left at its default. */
  public static final String SPOOL_ENV = "HDP_BNC_SPOOL";
  /** The default Python executable. */
  public static final String DEFAULT_PYTHON = "python3";

  /*
   * Tags: Weka's OptionMetadata writes and reads a SelectedTag by its readable string, so the readable
   * strings are the command-line values (and the names the Python side uses).
   */
  /** structures: naive Bayes, tree-augmented naive Bayes, k-dependence Bayes, selective kDB */
  public static final Tag[] TAGS_STRUCTURE = tags("nb", "tan", "kdb", "skdb");
  /** estimators: HDP, m-estimate, Laplace (add one), maximum likelihood with back-off */
  public static final Tag[] TAGS_ESTIMATOR = tags("hdp", "m-estimate", "laplace", "mle");
  /** concentration tying: one per node, siblings share, each tree level shares (the paper's), all share */
  public static final Tag[] TAGS_TYING = tags("none", "same-parent", "level", "single");
  /** how numeric attributes become nominal */
  public static final Tag[] TAGS_DISCRETIZATION = tags("mdl", "equal-frequency", "equal-width", "none");
  /** formats of the training data handed to the daemon */
  public static final Tag[] TAGS_DATA_FORMAT = tags("arrow", "arff");

  /** Tags numbered 0, 1, ... whose id string and readable string are the name, as typed (lower case). */
  private static Tag[] tags(String... names) {
    Tag[] out = new Tag[names.length];
    for (int i = 0; i < names.length; i++) {
      out[i] = new Tag(i, names[i], names[i], false);
    }
    return out;
  }

  // ---- options
  protected int m_Structure = 2;
  protected int m_K = 5;
  protected int m_Estimator = 0;
  protected int m_Iterations = 5000;
  protected int m_BurnIn = -1;
  protected int m_Tying = 2;
  protected int m_Seed = 0;
  protected String m_PythonExecutable = DEFAULT_PYTHON;
  protected File m_SpoolDirectory = defaultSpoolDirectory().toFile();
  protected int m_Timeout = 0;
  protected boolean m_DoNotStartDaemon = false;
  protected int m_DataFormat = 0;
  protected double m_M = 1.0;
  protected int m_Discretization = 0;

  // ---- the learnt model: plain serialisable fields
  /** the tables, or null before training */
  protected HDPModel m_Model;
  /** Weka instances to the model's codes */
  protected InstanceCoder m_Coder;
  /** per Weka class value, the model's class index (-1: not in the model) */
  protected int[] m_ClassMap;
  /** a class-prior-only model, used when the training data had fewer than two observed classes */
  protected PriorModel m_Prior;
  /** the training relation's name, for the graph */
  protected String m_Relation = "HDPBayesNet";

  /**
   * The per-user default spool: {@code $HDP_BNC_SPOOL} if set, else {@code ~/.hdp-bnc/spool}.
   *
   * @return the directory
   */
  public static Path defaultSpoolDirectory() {
    String env = System.getenv(SPOOL_ENV);
    if (env != null && !env.trim().isEmpty()) {
      return Paths.get(env.trim());
    }
    return Paths.get(System.getProperty("user.home"), ".hdp-bnc", "spool");
  }

  /**
   * Returns a string describing this classifier.
   *
   * @return a description suitable for displaying in the explorer/experimenter gui
   */
  public String globalInfo() {
    return "Bayesian network classifiers (naive Bayes, TAN, kDB-k, selective kDB) whose conditional "
      + "probability tables are estimated with a hierarchical Dirichlet process (HDP) and a collapsed Gibbs "
      + "sampler. Each table is smoothed towards its less specific contexts, which keeps high-order kDB models "
      + "accurate where plain frequency estimates overfit. Numeric attributes are discretised with MDL "
      + "(Fayyad and Irani); missing values are one more value.\n\n"
      + "Training runs in the hdp-bnc Python daemon (install it with: python3 -m pip install hdp-plugin), "
      + "which is started automatically; the learnt tables are then held in Java, so a saved model predicts "
      + "without Python.\n\nFor more information see:\n\n" + getTechnicalInformation().toString();
  }

  @Override
  public TechnicalInformation getTechnicalInformation() {
    TechnicalInformation result = new TechnicalInformation(Type.ARTICLE);
    result.setValue(Field.AUTHOR, "Francois Petitjean and Wray Buntine and Geoffrey I. Webb and Nayyar Zaidi");
    result.setValue(Field.TITLE, "Accurate parameter estimation for Bayesian network classifiers using "
      + "hierarchical Dirichlet processes");
    result.setValue(Field.JOURNAL, "Machine Learning");
    result.setValue(Field.YEAR, "2018");
    result.setValue(Field.VOLUME, "107");
    result.setValue(Field.NUMBER, "8-10");
    result.setValue(Field.PAGES, "1303-1331");
    return result;
  }

  /**
   * Cheap: never contacts Python (the GUI calls this constantly).
   *
   * @return nominal and numeric attributes, missing values, a nominal class
   */
  @Override
  public Capabilities getCapabilities() {
    Capabilities result = super.getCapabilities();
    result.disableAll();
    result.enable(Capability.NOMINAL_ATTRIBUTES);
    result.enable(Capability.NUMERIC_ATTRIBUTES);
    result.enable(Capability.MISSING_VALUES);
    result.enable(Capability.NOMINAL_CLASS);
    result.enable(Capability.MISSING_CLASS_VALUES);
    result.setMinimumNumberInstances(0);
    return result;
  }

  // ------------------------------------------------------------------------------------------
  // options
  // ------------------------------------------------------------------------------------------

  @OptionMetadata(displayName = "structure", description = "The network structure: nb, tan, kdb or skdb.",
    commandLineParamName = "S", commandLineParamSynopsis = "-S <nb|tan|kdb|skdb>", displayOrder = 1)
  public SelectedTag getStructure() {
    return new SelectedTag(m_Structure, TAGS_STRUCTURE);
  }

  public void setStructure(SelectedTag value) {
    if (value.getTags() == TAGS_STRUCTURE) {
      m_Structure = value.getSelectedTag().getID();
    }
  }

  public String structureTipText() {
    return "The network structure: nb, tan, kdb or skdb.";
  }

  @OptionMetadata(displayName = "k", description = "The largest number of attribute parents of kDB and SkDB "
    + "(ignored by nb and tan).", commandLineParamName = "K", commandLineParamSynopsis = "-K <int>", displayOrder = 2)
  public int getK() {
    return m_K;
  }

  public void setK(int value) {
    m_K = value;
  }

  public String KTipText() {
    return "The largest number of attribute parents of kDB and SkDB (ignored by nb and tan).";
  }

  @OptionMetadata(displayName = "estimator", description = "How the probability tables are estimated: hdp, "
    + "m-estimate, laplace or mle.", commandLineParamName = "E",
    commandLineParamSynopsis = "-E <hdp|m-estimate|laplace|mle>", displayOrder = 3)
  public SelectedTag getEstimator() {
    return new SelectedTag(m_Estimator, TAGS_ESTIMATOR);
  }

  public void setEstimator(SelectedTag value) {
    if (value.getTags() == TAGS_ESTIMATOR) {
      m_Estimator = value.getSelectedTag().getID();
    }
  }

  public String estimatorTipText() {
    return "How the probability tables are estimated: hdp, m-estimate, laplace or mle.";
  }

  @OptionMetadata(displayName = "iterations", description = "Gibbs iterations of the HDP sampler (the paper "
    + "uses 50000).", commandLineParamName = "I", commandLineParamSynopsis = "-I <int>", displayOrder = 4)
  public int getIterations() {
    return m_Iterations;
  }

  public void setIterations(int value) {
    m_Iterations = value;
  }

  public String iterationsTipText() {
    return "Gibbs iterations of the HDP sampler (the paper uses 50000).";
  }

  @OptionMetadata(displayName = "burnIn", description = "Iterations discarded before averaging; -1 means "
    + "min(1000, iterations/10).", commandLineParamName = "B", commandLineParamSynopsis = "-B <int>",
    displayOrder = 5)
  public int getBurnIn() {
    return m_BurnIn;
  }

  public void setBurnIn(int value) {
    m_BurnIn = value;
  }

  public String burnInTipText() {
    return "Iterations discarded before averaging; -1 means min(1000, iterations/10).";
  }

  @OptionMetadata(displayName = "tying", description = "How HDP concentrations are shared: none, same-parent, "
    + "level (the paper's) or single.", commandLineParamName = "T",
    commandLineParamSynopsis = "-T <none|same-parent|level|single>", displayOrder = 6)
  public SelectedTag getTying() {
    return new SelectedTag(m_Tying, TAGS_TYING);
  }

  public void setTying(SelectedTag value) {
    if (value.getTags() == TAGS_TYING) {
      m_Tying = value.getSelectedTag().getID();
    }
  }

  public String tyingTipText() {
    return "How HDP concentrations are shared: none, same-parent, level (the paper's) or single.";
  }

  @OptionMetadata(displayName = "seed", description = "The sampler's seed: the same seed gives the same model.",
    commandLineParamName = "seed", commandLineParamSynopsis = "-seed <int>", displayOrder = 7)
  @Override
  public int getSeed() {
    return m_Seed;
  }

  @Override
  public void setSeed(int value) {
    m_Seed = value;
  }

  public String seedTipText() {
    return "The sampler's seed: the same seed gives the same model.";
  }

  @OptionMetadata(displayName = "pythonExecutable", description = "The Python that runs the hdp-bnc daemon; "
    + "at the default, the environment variable " + PYTHON_ENV + " overrides it.", commandLineParamName = "python",
    commandLineParamSynopsis = "-python <executable>", displayOrder = 8)
  public String getPythonExecutable() {
    return m_PythonExecutable;
  }

  public void setPythonExecutable(String value) {
    m_PythonExecutable = value == null || value.trim().isEmpty() ? DEFAULT_PYTHON : value.trim();
  }

  public String pythonExecutableTipText() {
    return "The Python that runs the hdp-bnc daemon; at the default, the environment variable " + PYTHON_ENV
      + " overrides it.";
  }

  @OptionMetadata(displayName = "spoolDirectory", description = "The directory through which jobs go to the "
    + "daemon (default: ~/.hdp-bnc/spool, or " + SPOOL_ENV + ").", commandLineParamName = "spool",
    commandLineParamSynopsis = "-spool <directory>", displayOrder = 9)
  public File getSpoolDirectory() {
    return m_SpoolDirectory;
  }

  public void setSpoolDirectory(File value) {
    m_SpoolDirectory = value == null || value.getPath().isEmpty() ? defaultSpoolDirectory().toFile() : value;
  }

  public String spoolDirectoryTipText() {
    return "The directory through which jobs go to the daemon (default: ~/.hdp-bnc/spool, or " + SPOOL_ENV + ").";
  }

  @OptionMetadata(displayName = "timeout", description = "Seconds to wait for training before giving up; 0 "
    + "waits as long as training takes.", commandLineParamName = "timeout",
    commandLineParamSynopsis = "-timeout <seconds>", displayOrder = 10)
  public int getTimeout() {
    return m_Timeout;
  }

  public void setTimeout(int value) {
    m_Timeout = value;
  }

  public String timeoutTipText() {
    return "Seconds to wait for training before giving up; 0 waits as long as training takes.";
  }

  @OptionMetadata(displayName = "doNotStartDaemon", description = "Do not start a daemon when none is running "
    + "on the spool (fail instead).", commandLineParamName = "do-not-start-daemon",
    commandLineParamSynopsis = "-do-not-start-daemon", commandLineParamIsFlag = true, displayOrder = 11)
  public boolean getDoNotStartDaemon() {
    return m_DoNotStartDaemon;
  }

  public void setDoNotStartDaemon(boolean value) {
    m_DoNotStartDaemon = value;
  }

  public String doNotStartDaemonTipText() {
    return "Do not start a daemon when none is running on the spool (fail instead).";
  }

  @OptionMetadata(displayName = "m", description = "The m of the m-estimate (estimator m-estimate).",
    commandLineParamName = "M", commandLineParamSynopsis = "-M <number>", displayOrder = 13)
  public double getM() {
    return m_M;
  }

  public void setM(double value) {
    m_M = value;
  }

  public String MTipText() {
    return "The m of the m-estimate (estimator m-estimate).";
  }

  @OptionMetadata(displayName = "discretization", description = "How numeric attributes become nominal: mdl "
    + "(Fayyad and Irani, as Weka's supervised Discretize), equal-frequency, equal-width, or none (only nominal "
    + "data).", commandLineParamName = "discretization",
    commandLineParamSynopsis = "-discretization <mdl|equal-frequency|equal-width|none>", displayOrder = 14)
  public SelectedTag getDiscretization() {
    return new SelectedTag(m_Discretization, TAGS_DISCRETIZATION);
  }

  public void setDiscretization(SelectedTag value) {
    if (value.getTags() == TAGS_DISCRETIZATION) {
      m_Discretization = value.getSelectedTag().getID();
    }
  }

  public String discretizationTipText() {
    return "How numeric attributes become nominal: mdl (Fayyad and Irani, as Weka's supervised Discretize), "
      + "equal-frequency, equal-width, or none (only nominal data).";
  }

  @OptionMetadata(displayName = "dataFormat", description = "How the training data goes to the daemon: arrow "
    + "(Arrow IPC, exact numbers) or arff (Weka's ArffSaver).", commandLineParamName = "data-format",
    commandLineParamSynopsis = "-data-format <arrow|arff>", displayOrder = 12)
  public SelectedTag getDataFormat() {
    return new SelectedTag(m_DataFormat, TAGS_DATA_FORMAT);
  }

  public void setDataFormat(SelectedTag value) {
    if (value.getTags() == TAGS_DATA_FORMAT) {
      m_DataFormat = value.getSelectedTag().getID();
    }
  }

  public String dataFormatTipText() {
    return "How the training data goes to the daemon: arrow (Arrow IPC, exact numbers) or arff (Weka's ArffSaver).";
  }

  /**
   * The Python executable to use: the option, or {@code $HDP_BNC_PYTHON} when the option is at its
   * default.
   *
   * @return the executable
   */
  public String effectivePython() {
    String env = System.getenv(PYTHON_ENV);
    if (DEFAULT_PYTHON.equals(m_PythonExecutable) && env != null && !env.trim().isEmpty()) {
      return env.trim();
    }
    return m_PythonExecutable;
  }

  // ------------------------------------------------------------------------------------------
  // training and prediction
  // ------------------------------------------------------------------------------------------

  /**
   * Trains through the hdp-bnc daemon, then reads the model file into Java.
   *
   * @param data the training data
   * @throws Exception if the data is unsuitable, or training fails (with the daemon's message)
   */
  @Override
  public void buildClassifier(Instances data) throws Exception {
    getCapabilities().testWithFail(data);
    data = new Instances(data);
    data.deleteWithMissingClass();
    reset();
    m_Relation = data.relationName();
    int observed = PriorModel.observedClasses(data);
    if (observed < 2) { // nothing to learn beyond the prior: no daemon needed
      m_Prior = new PriorModel(data);
      return;
    }
    SpoolClient client = new SpoolClient(m_SpoolDirectory.toPath(), effectivePython(), !m_DoNotStartDaemon,
      m_Timeout, getDebug());
    client.setArff(m_DataFormat == 1);
    Path modelFile = client.train(data, jobParameters());
    try {
      setModel(ModelFile.read(modelFile), data);
    } finally {
      client.cleanUp();
    }
  }

  /** @return the job parameters, as the spool protocol names them */
  public java.util.Map<String, Object> jobParameters() {
    java.util.Map<String, Object> job = new java.util.LinkedHashMap<>();
    job.put("structure", TAGS_STRUCTURE[m_Structure].getIDStr());
    job.put("k", m_K);
    job.put("estimator", TAGS_ESTIMATOR[m_Estimator].getIDStr());
    job.put("iterations", m_Iterations);
    job.put("burn_in", m_BurnIn < 0 ? null : m_BurnIn);
    job.put("tying", TAGS_TYING[m_Tying].getIDStr());
    job.put("m", m_M);
    job.put("discretization", TAGS_DISCRETIZATION[m_Discretization].getIDStr());
    job.put("seed", m_Seed & 0xffffffffL); // the protocol wants a seed >= 0: one seed per int
    return job;
  }

  private void reset() {
    m_Model = null;
    m_Coder = null;
    m_ClassMap = null;
    m_Prior = null;
  }

  /**
   * Uses a model read from a model file, for data with the given header (used after training, and by
   * tests that load golden model files).
   *
   * @param model the model
   * @param header the data's header, with the class set
   */
  void setModel(HDPModel model, Instances header) {
    reset();
    InstanceCoder coder = new InstanceCoder(model, header);
    int[] classMap = coder.classMap(header.classAttribute());
    m_Model = model;
    m_Coder = coder;
    m_ClassMap = classMap;
    m_Relation = header.relationName();
  }

  /**
   * The class distribution of an instance, computed in Java from the stored tables.
   *
   * @param instance the instance
   * @return the distribution, in the order of the Weka class attribute's values
   * @throws Exception if no model was built
   */
  @Override
  public double[] distributionForInstance(Instance instance) throws Exception {
    if (m_Prior != null) {
      return m_Prior.distribution();
    }
    if (m_Model == null) {
      throw new Exception("HDPBayesNet: no model built yet");
    }
    double[] p = m_Coder.distribution(instance);
    double[] out = new double[m_ClassMap.length];
    for (int w = 0; w < out.length; w++) {
      out[w] = m_ClassMap[w] < 0 ? 0.0 : p[m_ClassMap[w]];
    }
    return out;
  }

  /** @return the model, or null before training (or for a class-prior-only model) */
  public HDPModel getModel() {
    return m_Model;
  }

  @Override
  public int graphType() {
    return Drawable.BayesNet;
  }

  /**
   * The learnt network in XML BIF 0.3 (as Weka's BayesNet), for the Explorer's "Visualize graph".
   *
   * @return the XML
   * @throws Exception if no model was built
   */
  @Override
  public String graph() throws Exception {
    if (m_Model == null) {
      throw new Exception("HDPBayesNet: no model built yet" + (m_Prior != null ? " (class prior only)" : ""));
    }
    return m_Model.toXMLBIF(m_Relation);
  }

  @Override
  public String toString() {
    if (m_Prior != null) {
      return "HDPBayesNet\n===========\n\n" + m_Prior.toString();
    }
    if (m_Model == null) {
      return "HDPBayesNet: No model built yet.";
    }
    return "HDPBayesNet (hdp-bnc)\n=====================\n\n" + m_Model.describe();
  }

  @Override
  public String getRevision() {
    return RevisionUtils.extract("$Revision: 1 $");
  }

  /**
   * Runs the classifier from the command line.
   *
   * @param args the options
   */
  public static void main(String[] args) {
    runClassifier(new HDPBayesNet(), args);
  }
}
