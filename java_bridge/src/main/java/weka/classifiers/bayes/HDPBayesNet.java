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
import weka.classifiers.bayes.hdpbnc.Feedback;
import weka.classifiers.bayes.hdpbnc.HDPModel;
import weka.classifiers.bayes.hdpbnc.InstanceCoder;
import weka.classifiers.bayes.hdpbnc.ModelFile;
import weka.classifiers.bayes.hdpbnc.NetworkDrawing;
import weka.classifiers.bayes.hdpbnc.PanelStop;
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
import weka.core.Utils;

/**
 * Bayesian network classifiers (naive Bayes, TAN, kDB, selective kDB, ESKDB) whose probability tables are
 * estimated with a hierarchical Dirichlet process, trained by the hdp-bnc Python daemon and predicting in
 * Java: see {@link #globalInfo()} and {@link #getTechnicalInformation()}.
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
  /**
   * structures: naive Bayes, tree-augmented naive Bayes, k-dependence Bayes, selective kDB, and ESKDB
   * (an ensemble of selective kDBs on sampled attribute orders and stochastic discretisations)
   */
  public static final Tag[] TAGS_STRUCTURE = tags("nb", "tan", "kdb", "skdb", "eskdb");
  /** estimators: HDP, m-estimate, Laplace (add one), maximum likelihood with back-off */
  public static final Tag[] TAGS_ESTIMATOR = tags("hdp", "m-estimate", "laplace", "mle");
  /** concentration tying: one per node, siblings share, each tree level shares (the paper's), all share */
  public static final Tag[] TAGS_TYING = tags("none", "same-parent", "level", "single");
  /** how numeric attributes become nominal */
  public static final Tag[] TAGS_DISCRETIZATION = tags("auto", "mdl", "stochastic-mdl", "stochastic-gain",
    "equal-frequency", "equal-width", "none");
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

  // ---- defaults and domains (the same as hdp_plugin's config.py and the job schema of docs/spool-protocol.md)
  /** The default structure. */
  public static final String DEFAULT_STRUCTURE = "eskdb";
  /** The default largest number of attribute parents. */
  public static final int DEFAULT_K = 5;
  /** The largest k the daemon accepts. */
  public static final int MAX_K = 64;
  /** The default number of members of an ESKDB ensemble. */
  public static final int DEFAULT_MEMBERS = 20;
  /** The most members the daemon accepts. */
  public static final int MAX_MEMBERS = 1000;
  /** The default estimator. */
  public static final String DEFAULT_ESTIMATOR = "hdp";
  /** The default number of Gibbs iterations: 0, auto (each tree stops once converged, at most the structure's default). */
  public static final int DEFAULT_ITERATIONS = 0;
  /**
   * The iterations of the default 0 for an eskdb ensemble (hdp_plugin's config.AUTO_ITERATIONS; a constant for
   * the option's description, checked against parameters.json's auto_iterations by ParametersSpecTest).
   */
  public static final int ESKDB_ITERATIONS = 100;
  /**
   * ... and at most this many once the training rows average DENSE_ROWS_PER_CLASS or more per class present
   * (config.AUTO_DENSE_ITERATIONS, config.DENSE_ROWS_PER_CLASS: the daemon applies the rule; the constants are
   * for the option's description, checked against parameters.json's dense_iterations by ParametersSpecTest).
   */
  public static final int ESKDB_DENSE_ITERATIONS = 25;
  public static final int DENSE_ROWS_PER_CLASS = 100;
  /** The iterations of the default 0 for a single network (config.DEFAULT_ITERATIONS; checked as ESKDB_ITERATIONS). */
  public static final int NETWORK_ITERATIONS = 5000;
  /** The most Gibbs iterations the daemon accepts. */
  public static final int MAX_ITERATIONS = 10_000_000;
  /** The burn-in of -1 (hdp_plugin's params.default_burn_in; ParametersSpecTest checks it against parameters.json). */
  public static final String BURN_IN_RULE = "min(1000, iterations/10)";
  /** The default burn-in: -1 means {@value #BURN_IN_RULE}. */
  public static final int DEFAULT_BURN_IN = -1;
  /** The default concentration tying. */
  public static final String DEFAULT_TYING = "level";
  /** The default m of the m-estimate. */
  public static final double DEFAULT_M = 1.0;
  /** The default discretisation: stochastic-gain for eskdb, mdl otherwise. */
  public static final String DEFAULT_DISCRETIZATION = "auto";
  /** The default data format. */
  public static final String DEFAULT_DATA_FORMAT = "arrow";

  // ---- option descriptions: one constant each, for @OptionMetadata (the -h text) and the GUI's tip text
  static final String STRUCTURE_TIP = "The network structure: nb, tan, kdb, skdb, or eskdb (an ensemble of "
    + "selective kDBs, each on its own sampled attribute order and cut points, averaged) (default: "
    + DEFAULT_STRUCTURE + ").";
  static final String K_TIP = "The largest number of attribute parents of kdb, skdb and eskdb members, 0 to " + MAX_K
    + "; ignored by nb and tan (default: " + DEFAULT_K + ").";
  static final String MEMBERS_TIP = "The number of members of an eskdb ensemble, 1 to " + MAX_MEMBERS
    + "; only for eskdb (default: " + DEFAULT_MEMBERS + ").";
  static final String ESTIMATOR_TIP = "How the probability tables are estimated: hdp, m-estimate, laplace or mle "
    + "(default: " + DEFAULT_ESTIMATOR + ").";
  static final String ITERATIONS_TIP = "Gibbs iterations of the HDP sampler, 1 to " + MAX_ITERATIONS
    + ", or 0 for auto: each context tree stops once its averaged tables have converged, after at most "
    + ESKDB_ITERATIONS + " for eskdb (" + ESKDB_DENSE_ITERATIONS + " when the training rows average "
    + DENSE_ROWS_PER_CLASS + " or more per class), " + NETWORK_ITERATIONS + " otherwise; the paper uses 50000 (default: "
    + DEFAULT_ITERATIONS + ").";
  static final String BURN_IN_TIP = "Iterations discarded before averaging, below the iterations; -1 means "
    + BURN_IN_RULE + " (default: " + DEFAULT_BURN_IN + ").";
  static final String TYING_TIP = "How HDP concentrations are shared: none, same-parent, level (the paper's) or "
    + "single (default: " + DEFAULT_TYING + ").";
  static final String SEED_TIP = "The sampler's seed: the same seed gives the same model (default: 0).";
  static final String PYTHON_TIP = "The Python that runs the hdp-bnc daemon. At the default, the environment "
    + "variable " + PYTHON_ENV + " names it if set, else HDPBayesNet uses its own Python environment, made on first "
    + "use from the wheel that comes with the package (default: " + DEFAULT_PYTHON + ").";
  static final String SPOOL_TIP = "The directory through which jobs go to the daemon (default: ~/.hdp-bnc/spool, "
    + "or " + SPOOL_ENV + ").";
  static final String TIMEOUT_TIP = "Seconds to wait for training before giving up; 0 waits as long as training "
    + "takes (default: 0).";
  static final String DO_NOT_START_TIP = "Do not start a daemon when none is running on the spool (fail instead).";
  static final String DATA_FORMAT_TIP = "How the training data goes to the daemon: arrow (Arrow IPC, exact numbers) "
    + "or arff (Weka's ArffSaver) (default: " + DEFAULT_DATA_FORMAT + ").";
  static final String M_TIP = "The m of the m-estimate (estimator m-estimate), a number >= 0 (default: " + DEFAULT_M
    + ").";
  static final String DISCRETIZATION_TIP = "How numeric attributes become nominal: auto (stochastic-gain for "
    + "eskdb, else mdl), mdl (Fayyad and Irani, as Weka's supervised Discretize), stochastic-mdl (cut points "
    + "drawn in proportion to their MDL margin, as the method's authors' ESKDB), stochastic-gain (drawn by "
    + "information gain, at least two per informative attribute, up to four with many classes), equal-frequency, equal-width, or none (only nominal data) "
    + "(default: " + DEFAULT_DISCRETIZATION + ").";

  // ---- options
  protected int m_Structure = index(TAGS_STRUCTURE, DEFAULT_STRUCTURE);
  protected int m_K = DEFAULT_K;
  protected int m_Members = DEFAULT_MEMBERS;
  protected int m_Estimator = index(TAGS_ESTIMATOR, DEFAULT_ESTIMATOR);
  protected int m_Iterations = DEFAULT_ITERATIONS;
  protected int m_BurnIn = DEFAULT_BURN_IN;
  protected int m_Tying = index(TAGS_TYING, DEFAULT_TYING);
  protected int m_Seed = 0;
  protected String m_PythonExecutable = DEFAULT_PYTHON;
  protected File m_SpoolDirectory = defaultSpoolDirectory().toFile();
  protected int m_Timeout = 0;
  protected boolean m_DoNotStartDaemon = false;
  protected int m_DataFormat = index(TAGS_DATA_FORMAT, DEFAULT_DATA_FORMAT);
  protected double m_M = DEFAULT_M;
  protected int m_Discretization = index(TAGS_DISCRETIZATION, DEFAULT_DISCRETIZATION);

  private static int index(Tag[] tags, String name) {
    for (int i = 0; i < tags.length; i++) {
      if (tags[i].getIDStr().equals(name)) {
        return i;
      }
    }
    throw new IllegalArgumentException(name);
  }

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
    return "Bayesian network classifiers (naive Bayes, TAN, kDB-k, selective kDB, and ESKDB: an ensemble of "
      + "selective kDBs) whose conditional probability tables are estimated with a hierarchical Dirichlet "
      + "process (HDP) and a collapsed Gibbs sampler. Each table is smoothed towards its less specific contexts, "
      + "which keeps high-order kDB models accurate where plain frequency estimates overfit. The default is the "
      + "ESKDB ensemble of " + DEFAULT_MEMBERS + " members, each on its own attribute order and cut points. "
      + "Numeric attributes are discretised by the discretization option: at its default, auto, by "
      + "stochastic-gain for eskdb and by MDL (Fayyad and Irani) for the other structures; missing values are "
      + "one more value.\n\n"
      + "Training runs in the hdp-bnc Python daemon, which is started automatically. The Weka package carries "
      + "the hdp_plugin wheel: on first use it makes its own Python environment with the Python 3.10 or later on "
      + "the PATH and installs the wheel and its dependencies with pip (once, one to a few minutes), unless the "
      + "pythonExecutable option or " + PYTHON_ENV + " names a Python that has hdp_plugin. The wheel carries the "
      + "sampler's kernels compiled; only where they do not fit (another platform, or another numba) does the "
      + "first training compile them, once, and say so. The learnt tables are held "
      + "in Java, so a saved model predicts without Python.\n\nFor more information see:\n\n"
      + getTechnicalInformation().toString();
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

  @OptionMetadata(displayName = "structure", description = STRUCTURE_TIP, commandLineParamName = "S",
    commandLineParamSynopsis = "-S <nb|tan|kdb|skdb|eskdb>", displayOrder = 1)
  public SelectedTag getStructure() {
    return new SelectedTag(m_Structure, TAGS_STRUCTURE);
  }

  public void setStructure(SelectedTag value) {
    m_Structure = selected("-S", value, TAGS_STRUCTURE);
  }

  public String structureTipText() {
    return STRUCTURE_TIP;
  }

  @OptionMetadata(displayName = "k", description = K_TIP, commandLineParamName = "K",
    commandLineParamSynopsis = "-K <int>", displayOrder = 2)
  public int getK() {
    return m_K;
  }

  /**
   * @param value the largest number of attribute parents, at least 0 (at most {@value #MAX_K} for kdb and
   *          skdb, checked before training because nb and tan ignore it)
   */
  public void setK(int value) {
    m_K = atLeast("-K", "k", value, 0);
  }

  public String KTipText() {
    return K_TIP;
  }

  @OptionMetadata(displayName = "members", description = MEMBERS_TIP, commandLineParamName = "members",
    commandLineParamSynopsis = "-members <int>", displayOrder = 2)
  public int getMembers() {
    return m_Members;
  }

  /**
   * @param value the number of members of an eskdb ensemble, 1 to {@value #MAX_MEMBERS}
   */
  public void setMembers(int value) {
    if (value < 1 || value > MAX_MEMBERS) {
      throw new IllegalArgumentException("HDPBayesNet: members (-members) must be an integer from 1 to "
        + MAX_MEMBERS + ", got " + value);
    }
    m_Members = value;
  }

  public String membersTipText() {
    return MEMBERS_TIP;
  }

  @OptionMetadata(displayName = "estimator", description = ESTIMATOR_TIP, commandLineParamName = "E",
    commandLineParamSynopsis = "-E <hdp|m-estimate|laplace|mle>", displayOrder = 3)
  public SelectedTag getEstimator() {
    return new SelectedTag(m_Estimator, TAGS_ESTIMATOR);
  }

  public void setEstimator(SelectedTag value) {
    m_Estimator = selected("-E", value, TAGS_ESTIMATOR);
  }

  public String estimatorTipText() {
    return ESTIMATOR_TIP;
  }

  @OptionMetadata(displayName = "iterations", description = ITERATIONS_TIP, commandLineParamName = "I",
    commandLineParamSynopsis = "-I <int>", displayOrder = 4)
  public int getIterations() {
    return m_Iterations;
  }

  public void setIterations(int value) {
    if (value < 0 || value > MAX_ITERATIONS) {
      throw new IllegalArgumentException("HDPBayesNet: iterations (-I) must be an integer from 1 to "
        + MAX_ITERATIONS + ", or 0 for the structure's default, got " + value);
    }
    m_Iterations = value;
  }

  public String iterationsTipText() {
    return ITERATIONS_TIP;
  }

  @OptionMetadata(displayName = "burnIn", description = BURN_IN_TIP, commandLineParamName = "B",
    commandLineParamSynopsis = "-B <int>", displayOrder = 5)
  public int getBurnIn() {
    return m_BurnIn;
  }

  /** @param value -1 (automatic) or an integer >= 0, below the iterations (checked before training) */
  public void setBurnIn(int value) {
    m_BurnIn = atLeast("-B", "burnIn", value, -1);
  }

  public String burnInTipText() {
    return BURN_IN_TIP;
  }

  @OptionMetadata(displayName = "tying", description = TYING_TIP, commandLineParamName = "L",
    commandLineParamSynopsis = "-L <none|same-parent|level|single>", displayOrder = 6)
  public SelectedTag getTying() {
    return new SelectedTag(m_Tying, TAGS_TYING);
  }

  public void setTying(SelectedTag value) {
    m_Tying = selected("-L", value, TAGS_TYING);
  }

  public String tyingTipText() {
    return TYING_TIP;
  }

  @OptionMetadata(displayName = "seed", description = SEED_TIP, commandLineParamName = "seed",
    commandLineParamSynopsis = "-seed <int>", displayOrder = 7)
  @Override
  public int getSeed() {
    return m_Seed;
  }

  @Override
  public void setSeed(int value) {
    m_Seed = value;
  }

  public String seedTipText() {
    return SEED_TIP;
  }

  @OptionMetadata(displayName = "pythonExecutable", description = PYTHON_TIP, commandLineParamName = "python",
    commandLineParamSynopsis = "-python <executable>", displayOrder = 8)
  public String getPythonExecutable() {
    return m_PythonExecutable;
  }

  public void setPythonExecutable(String value) {
    m_PythonExecutable = value == null || value.trim().isEmpty() ? DEFAULT_PYTHON : value.trim();
  }

  public String pythonExecutableTipText() {
    return PYTHON_TIP;
  }

  @OptionMetadata(displayName = "spoolDirectory", description = SPOOL_TIP, commandLineParamName = "spool",
    commandLineParamSynopsis = "-spool <directory>", displayOrder = 9)
  public File getSpoolDirectory() {
    return m_SpoolDirectory;
  }

  public void setSpoolDirectory(File value) {
    m_SpoolDirectory = value == null || value.getPath().isEmpty() ? defaultSpoolDirectory().toFile() : value;
  }

  public String spoolDirectoryTipText() {
    return SPOOL_TIP;
  }

  @OptionMetadata(displayName = "timeout", description = TIMEOUT_TIP, commandLineParamName = "timeout",
    commandLineParamSynopsis = "-timeout <seconds>", displayOrder = 10)
  public int getTimeout() {
    return m_Timeout;
  }

  public void setTimeout(int value) {
    m_Timeout = atLeast("-timeout", "timeout", value, 0);
  }

  public String timeoutTipText() {
    return TIMEOUT_TIP;
  }

  @OptionMetadata(displayName = "doNotStartDaemon", description = DO_NOT_START_TIP,
    commandLineParamName = "do-not-start-daemon", commandLineParamSynopsis = "-do-not-start-daemon",
    commandLineParamIsFlag = true, displayOrder = 11)
  public boolean getDoNotStartDaemon() {
    return m_DoNotStartDaemon;
  }

  public void setDoNotStartDaemon(boolean value) {
    m_DoNotStartDaemon = value;
  }

  public String doNotStartDaemonTipText() {
    return DO_NOT_START_TIP;
  }

  @OptionMetadata(displayName = "m", description = M_TIP, commandLineParamName = "M",
    commandLineParamSynopsis = "-M <number>", displayOrder = 13)
  public double getM() {
    return m_M;
  }

  public void setM(double value) {
    if (!(value >= 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException("HDPBayesNet: m (-M) must be a finite number >= 0, got " + value);
    }
    m_M = value;
  }

  public String MTipText() {
    return M_TIP;
  }

  @OptionMetadata(displayName = "discretization", description = DISCRETIZATION_TIP,
    commandLineParamName = "discretization",
    commandLineParamSynopsis = "-discretization <auto|mdl|stochastic-mdl|stochastic-gain|equal-frequency|equal-width|none>",
    displayOrder = 14)
  public SelectedTag getDiscretization() {
    return new SelectedTag(m_Discretization, TAGS_DISCRETIZATION);
  }

  public void setDiscretization(SelectedTag value) {
    m_Discretization = selected("-discretization", value, TAGS_DISCRETIZATION);
  }

  public String discretizationTipText() {
    return DISCRETIZATION_TIP;
  }

  @OptionMetadata(displayName = "dataFormat", description = DATA_FORMAT_TIP, commandLineParamName = "data-format",
    commandLineParamSynopsis = "-data-format <arrow|arff>", displayOrder = 12)
  public SelectedTag getDataFormat() {
    return new SelectedTag(m_DataFormat, TAGS_DATA_FORMAT);
  }

  public void setDataFormat(SelectedTag value) {
    m_DataFormat = selected("-data-format", value, TAGS_DATA_FORMAT);
  }

  public String dataFormatTipText() {
    return DATA_FORMAT_TIP;
  }

  private static int atLeast(String option, String name, int value, int minimum) {
    if (value < minimum) {
      throw new IllegalArgumentException("HDPBayesNet: " + name + " (" + option + ") must be an integer >= "
        + minimum + ", got " + value);
    }
    return value;
  }

  private static int selected(String option, SelectedTag value, Tag[] tags) {
    if (value == null || value.getTags() != tags) {
      throw new IllegalArgumentException("HDPBayesNet: " + option + " must be one of " + names(tags) + ", got "
        + (value == null ? "nothing" : value.getSelectedTag().getReadable()));
    }
    return value.getSelectedTag().getID();
  }

  private static String names(Tag[] tags) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < tags.length; i++) {
      b.append(i == 0 ? "" : i == tags.length - 1 ? " or " : ", ").append(tags[i].getIDStr());
    }
    return b.toString();
  }

  // ------------------------------------------------------------------------------------------
  // the command line: every value checked, nothing trained on a mistyped option
  // ------------------------------------------------------------------------------------------

  /**
   * One command-line option: a bean property with {@link OptionMetadata} (its name, whether it is a flag and
   * its place come from the annotation), read and written through its getter and setter. The annotations are
   * the one declaration of the options: Weka's -h text and GUI read them, and {@link #setOptions} and
   * {@link #getOptions} are derived from them (the defaults are those of a new HDPBayesNet).
   */
  private static final class CommandLineOption {
    final String name;
    final boolean flag;
    final int order;
    final java.lang.reflect.Method getter;
    final java.lang.reflect.Method setter;

    CommandLineOption(OptionMetadata meta, java.lang.reflect.Method getter, java.lang.reflect.Method setter) {
      this.name = meta.commandLineParamName();
      this.flag = meta.commandLineParamIsFlag();
      this.order = meta.displayOrder();
      this.getter = getter;
      this.setter = setter;
    }

    Object get(HDPBayesNet c) {
      try {
        return getter.invoke(c);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(getter.getName(), e);
      }
    }

    /** Sets the property; a value the setter refuses throws its IllegalArgumentException. */
    void set(HDPBayesNet c, Object value) {
      try {
        setter.invoke(c, value);
      } catch (java.lang.reflect.InvocationTargetException e) {
        if (e.getCause() instanceof IllegalArgumentException) {
          throw (IllegalArgumentException) e.getCause();
        }
        throw new IllegalStateException(setter.getName(), e.getCause());
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(setter.getName(), e);
      }
    }

    /**
     * @param text the option's value as given, empty when absent
     * @param dflt the property's default
     * @return the value to set: the default when absent
     * @throws Exception naming the option when the text does not parse
     */
    Object parse(String text, Object dflt) throws Exception {
      Class<?> type = getter.getReturnType();
      if (type == File.class) {
        return text.isEmpty() ? dflt : new File(text);
      }
      String v = text.trim();
      if (v.isEmpty()) {
        return dflt;
      }
      if (type == SelectedTag.class) {
        Tag[] tags = ((SelectedTag) dflt).getTags();
        for (Tag t : tags) {
          if (t.getIDStr().equalsIgnoreCase(v)) {
            return new SelectedTag(t.getID(), tags);
          }
        }
        throw new Exception("HDPBayesNet: -" + name + " must be one of " + names(tags) + ", got '" + v + "'");
      }
      try {
        if (type == int.class) {
          return Integer.parseInt(v);
        }
        if (type == double.class) {
          return Double.parseDouble(v);
        }
      } catch (NumberFormatException e) {
        throw new Exception("HDPBayesNet: -" + name + " must be " + (type == int.class ? "an integer" : "a number")
          + ", got '" + v + "'");
      }
      return text; // a String property: its setter trims it
    }

    /** @return the option's value as getOptions writes it */
    static String text(Object value) {
      if (value instanceof SelectedTag) {
        return ((SelectedTag) value).getSelectedTag().getIDStr();
      }
      return value instanceof File ? ((File) value).getPath() : String.valueOf(value);
    }
  }

  /** The command-line options, in their display order (ties by name), from the annotated getters. */
  private static volatile java.util.List<CommandLineOption> s_Options;

  private static java.util.List<CommandLineOption> commandLineOptions() {
    java.util.List<CommandLineOption> options = s_Options;
    if (options != null) {
      return options;
    }
    options = new java.util.ArrayList<>();
    for (java.lang.reflect.Method getter : HDPBayesNet.class.getMethods()) {
      OptionMetadata meta = getter.getAnnotation(OptionMetadata.class);
      if (meta == null || getter.getParameterCount() != 0) {
        continue;
      }
      String property = getter.getName().replaceFirst("^(get|is)", "");
      try {
        options.add(new CommandLineOption(meta, getter, HDPBayesNet.class.getMethod("set" + property,
          getter.getReturnType())));
      } catch (NoSuchMethodException e) {
        throw new IllegalStateException("the option -" + meta.commandLineParamName() + " has no setter", e);
      }
    }
    options.sort(java.util.Comparator.comparingInt((CommandLineOption o) -> o.order)
      .thenComparing(o -> o.name.toLowerCase(java.util.Locale.ROOT)));
    s_Options = java.util.Collections.unmodifiableList(options);
    return s_Options;
  }

  /**
   * Sets the options (those not given take their defaults, as Weka's classifiers do). A value that does not
   * parse or lies outside its domain throws an Exception naming the option and what it accepts, so nothing
   * is trained with a mistyped option.
   *
   * @param options the options
   * @throws Exception naming a bad option and its allowed values
   */
  @Override
  public void setOptions(String[] options) throws Exception {
    HDPBayesNet defaults = new HDPBayesNet();
    java.util.Map<CommandLineOption, Boolean> flags = new java.util.LinkedHashMap<>();
    try {
      for (CommandLineOption o : commandLineOptions()) {
        if (o.flag) {
          flags.put(o, Utils.getFlag(o.name, options));
        } else {
          o.set(this, o.parse(Utils.getOption(o.name, options), o.get(defaults)));
        }
      }
      // AbstractClassifier's own options; its pass over the annotated options finds none of ours (taken out
      // above) but sets the flags to "absent", so the flags are set after it
      super.setOptions(options);
      for (java.util.Map.Entry<CommandLineOption, Boolean> f : flags.entrySet()) {
        f.getKey().set(this, f.getValue());
      }
    } catch (IllegalArgumentException e) {
      throw new Exception(e.getMessage(), e);
    }
    checkOptions();
  }

  /**
   * The checks that involve two options (each option alone is checked by its setter): k at most
   * {@value #MAX_K} for kdb and skdb, burn-in below the iterations for hdp.
   *
   * @throws Exception naming the options
   */
  public void checkOptions() throws Exception {
    String structure = TAGS_STRUCTURE[m_Structure].getIDStr();
    if ((structure.equals("kdb") || structure.equals("skdb") || structure.equals("eskdb")) && m_K > MAX_K) {
      throw new Exception("HDPBayesNet: k (-K) must be from 0 to " + MAX_K + " for " + structure + ", got " + m_K);
    }
    int iterations = resolvedIterations();
    if (TAGS_ESTIMATOR[m_Estimator].getIDStr().equals("hdp") && m_BurnIn >= iterations) {
      throw new Exception("HDPBayesNet: burnIn (-B) must be below the iterations (-I " + iterations
        + (m_Iterations == 0 ? ", the default for " + structure : "") + "), got " + m_BurnIn
        + "; -1 chooses " + BURN_IN_RULE);
    }
  }

  /** @return the most Gibbs iterations training runs: -I, or for 0 (auto) the structure's default */
  public int resolvedIterations() {
    if (m_Iterations != 0) {
      return m_Iterations;
    }
    return TAGS_STRUCTURE[m_Structure].getIDStr().equals("eskdb") ? ESKDB_ITERATIONS : NETWORK_ITERATIONS;
  }

  /**
   * The options that differ from their defaults (what the Experimenter stores and the Explorer shows), so
   * that machine-specific values such as the Python and the spool appear only when set.
   *
   * @return the options
   */
  @Override
  public String[] getOptions() {
    HDPBayesNet defaults = new HDPBayesNet();
    java.util.List<String> out = new java.util.ArrayList<>();
    java.util.Set<String> values = new java.util.HashSet<>();
    java.util.Set<String> flags = new java.util.HashSet<>();
    for (CommandLineOption o : commandLineOptions()) {
      Object value = o.get(this);
      (o.flag ? flags : values).add(o.name);
      if (o.flag) {
        if (Boolean.TRUE.equals(value)) {
          out.add("-" + o.name);
        }
      } else if (!CommandLineOption.text(value).equals(CommandLineOption.text(o.get(defaults)))) {
        out.add("-" + o.name);
        out.add(CommandLineOption.text(value));
      }
    }
    // AbstractClassifier's own options (debug, batch size, ...), without its copy of ours
    String[] all = super.getOptions();
    for (int i = 0; i < all.length; i++) {
      String name = all[i].startsWith("-") ? all[i].substring(1) : null;
      if (values.contains(name)) {
        i++; // and its value
      } else if (!flags.contains(name)) {
        out.add(all[i]);
      }
    }
    return out.toArray(new String[0]);
  }

  /**
   * The Python that starts a daemon: the option if set, else {@code $HDP_BNC_PYTHON} if set; else null,
   * which means the Weka package's own Python environment (made on first use, see
   * {@link weka.classifiers.bayes.hdpbnc.PythonEnvironment}), or python3 outside an installed package.
   *
   * @return the executable, or null
   */
  String pythonForDaemon() {
    if (!DEFAULT_PYTHON.equals(m_PythonExecutable)) {
      return m_PythonExecutable;
    }
    String env = System.getenv(PYTHON_ENV);
    return env != null && !env.trim().isEmpty() ? env.trim() : null;
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
    PanelStop.enter(Thread.currentThread()); // the Explorer's Stop: an interrupt, answered here (PanelStop)
    PanelStop.stopIfAsked();
    checkOptions();
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
    SpoolClient client = new SpoolClient(m_SpoolDirectory.toPath(), pythonForDaemon(), !m_DoNotStartDaemon,
      m_Timeout, getDebug());
    client.setArff(m_DataFormat == 1);
    try {
      try {
        setModel(ModelFile.read(client.train(data, jobParameters())), data);
      } finally {
        client.cleanUp(); // also when stopped between train() and reading its model
      }
      PanelStop.stopIfAsked();
    } catch (ThreadDeath stopped) { // Thread.stop(): Weka's panel carries on in its finally block, uninterrupted
      Thread.interrupted();
      throw stopped;
    } catch (Exception e) {
      if ((client.wasInterrupted() || Thread.currentThread().isInterrupted() || byInterruption(e))
        && Feedback.forThread(Thread.currentThread(), false).toPanel()) {
        throw endAsStopped(e);
      }
      throw e;
    }
  }

  /** How long an interrupted training in a Weka GUI waits for the Thread.stop() that follows the interrupt. */
  static final long STOP_GRACE_MILLIS = 3000;

  /**
   * @param e an exception
   * @return true if it, or one of its causes, says that the thread was interrupted
   */
  static boolean byInterruption(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof InterruptedException || t instanceof java.io.InterruptedIOException
        || t instanceof java.nio.channels.ClosedByInterruptException
        || t instanceof java.nio.channels.FileLockInterruptionException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Ends a training that the Stop button of a Weka GUI panel interrupted the way Stop ends Weka's own
   * classifiers: by a ThreadDeath. An exception would reach the panel's {@code catch (Exception)}, which
   * shows a modal "Problem evaluating classifier" dialog. In the Explorer's Classify panel Stop is an
   * interrupt only ({@link PanelStop}), and the ThreadDeath is thrown at once; in another panel, whose Stop
   * calls Thread.stop() right after interrupt(), the thread waits here, uninterrupted, for the stop() (which
   * arriving in the panel's finally block would leave it stuck), and throws a ThreadDeath itself if none
   * comes (JDK 20 and later, where stop() is unsupported). The job was cancelled by the client's monitor; the
   * panel's status line says "stopped".
   *
   * @param e what the interruption made the training throw
   * @return never returns normally
   */
  @SuppressWarnings({"deprecation", "removal"})
  static ThreadDeath endAsStopped(Exception e) {
    try {
      Thread.interrupted();
      long end = System.nanoTime() + (PanelStop.cooperative(Thread.currentThread()) ? 0
        : STOP_GRACE_MILLIS * 1_000_000L);
      while (System.nanoTime() < end) {
        try {
          Thread.sleep(10);
        } catch (InterruptedException again) {
          // stop() interrupts the thread as it stops it
        }
      }
    } catch (ThreadDeath stopped) {
      Thread.interrupted();
      Feedback.stoppedInPanel(Thread.currentThread());
      throw stopped;
    }
    Thread.interrupted();
    Feedback.stoppedInPanel(Thread.currentThread()); // Weka's panel says nothing of a run it did not interrupt
    ThreadDeath stopped = new ThreadDeath();
    stopped.initCause(e);
    return stopped;
  }

  /** @return the job parameters, as the spool protocol names them */
  public java.util.Map<String, Object> jobParameters() {
    java.util.Map<String, Object> job = new java.util.LinkedHashMap<>();
    String structure = TAGS_STRUCTURE[m_Structure].getIDStr();
    boolean hdp = TAGS_ESTIMATOR[m_Estimator].getIDStr().equals("hdp");
    job.put("structure", structure);
    // options that do not apply go at their defaults (nb and tan ignore k; only hdp samples)
    job.put("k", structure.equals("nb") || structure.equals("tan") ? DEFAULT_K : m_K);
    job.put("n_members", structure.equals("eskdb") ? m_Members : DEFAULT_MEMBERS);
    job.put("estimator", TAGS_ESTIMATOR[m_Estimator].getIDStr());
    job.put("iterations", m_Iterations == 0 ? null : m_Iterations); // null: the structure's default
    job.put("burn_in", m_BurnIn < 0 || !hdp ? null : m_BurnIn);
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
    PanelStop.stopIfAsked(); // the Explorer's Stop during Weka's evaluation of a fold
    if (m_Prior != null) {
      return m_Prior.distribution();
    }
    if (m_Model == null) {
      throw new Exception("HDPBayesNet: no model built yet");
    }
    return inWekaOrder(m_Coder.distribution(instance));
  }

  /**
   * A distribution in the model's class order, in the order of the Weka class attribute's values (0 for a
   * value the model has no class for).
   */
  private double[] inWekaOrder(double[] p) {
    double[] out = new double[m_ClassMap.length];
    for (int w = 0; w < out.length; w++) {
      out[w] = m_ClassMap[w] < 0 ? 0.0 : p[m_ClassMap[w]];
    }
    return out;
  }

  /** Rows predicted together by {@link #distributionsForInstances}: enough for a tree to stay in the cache. */
  static final int PREDICTION_BLOCK = 256;

  /** @return true: {@link #distributionsForInstances} predicts blocks of rows tree by tree, faster than row by row */
  @Override
  public boolean implementsMoreEfficientBatchPrediction() {
    return true;
  }

  /**
   * The class distributions of every instance, as {@link #distributionForInstance} gives them, computed
   * {@link #PREDICTION_BLOCK} rows at a time, each block tree by tree (Weka's evaluation calls this).
   *
   * @param insts the instances
   * @return per instance, the distribution in the order of the Weka class attribute's values
   * @throws Exception if no model was built
   */
  @Override
  public double[][] distributionsForInstances(Instances insts) throws Exception {
    double[][] out = new double[insts.numInstances()][];
    if (m_Prior != null || m_Model == null) {
      for (int r = 0; r < out.length; r++) {
        out[r] = distributionForInstance(insts.instance(r));
      }
      return out;
    }
    for (int from = 0; from < out.length; from += PREDICTION_BLOCK) {
      PanelStop.stopIfAsked();
      int to = Math.min(out.length, from + PREDICTION_BLOCK);
      double[][] p = m_Coder.distributions(insts, from, to);
      for (int r = from; r < to; r++) {
        out[r] = inWekaOrder(p[r - from]);
      }
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
   * The learnt network in XML BIF 0.3 (as Weka's BayesNet), for the Explorer's "Visualize graph": built from
   * the model at each call and not kept (the Explorer asks for it after every training and keeps it with the
   * result), and bounded: as much of member 0 as {@link NetworkDrawing#toXMLBIF} draws.
   *
   * @return the XML text
   * @throws Exception if no model was built
   */
  @Override
  public String graph() throws Exception {
    if (m_Model == null) {
      throw new Exception("HDPBayesNet: no model built yet" + (m_Prior != null ? " (class prior only)" : ""));
    }
    return NetworkDrawing.toXMLBIF(m_Model, m_Relation);
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

  /** Runs the classifier from the command line, with the options {@code args}. */
  public static void main(String[] args) {
    runClassifier(new HDPBayesNet(), args);
  }
}
