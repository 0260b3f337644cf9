// Runs Weka's NaiveBayes, BayesNet (TAN search) and RandomForest on given train/test ARFF folds
// and writes, per test row, the class probabilities (one CSV line per row, classes in the order
// of the class attribute's declared values).
//
// Usage (Java 11+ source launcher, Weka on the class path; benchmarks/peers_weka.py gets it from
// tools/weka/classpath.sh):
//   java -cp WEKA_CLASSPATH WekaPeers.java METHOD SEED TRAIN.arff TEST.arff OUT.csv [METHOD SEED ...]
// METHOD is nb, tan or rf. The class is the last attribute. OUT.csv starts with a comment line
// "# train_s=... test_s=...". Every classifier runs with Weka's defaults except the TAN search
// and the RandomForest seed.
import java.io.FileWriter;
import java.io.PrintWriter;
import java.util.Locale;

import weka.classifiers.AbstractClassifier;
import weka.classifiers.Classifier;
import weka.classifiers.bayes.BayesNet;
import weka.classifiers.bayes.NaiveBayes;
import weka.classifiers.bayes.net.search.local.TAN;
import weka.classifiers.trees.RandomForest;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

public class WekaPeers {

    static Classifier make(String method, int seed) throws Exception {
        switch (method) {
            case "nb":
                return new NaiveBayes();
            case "tan": {
                BayesNet bn = new BayesNet();
                bn.setSearchAlgorithm(new TAN());
                return bn;
            }
            case "rf": {
                RandomForest rf = new RandomForest();  // 100 trees by default in 3.8
                rf.setSeed(seed);
                rf.setNumExecutionSlots(1);
                return rf;
            }
            default:
                throw new IllegalArgumentException("method must be nb, tan or rf, got " + method);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || args.length % 5 != 0) {
            System.err.println("usage: WekaPeers METHOD SEED TRAIN.arff TEST.arff OUT.csv [...]");
            System.exit(2);
        }
        for (int a = 0; a < args.length; a += 5) {
            String method = args[a];
            int seed = Integer.parseInt(args[a + 1]);
            Instances train = DataSource.read(args[a + 2]);
            Instances test = DataSource.read(args[a + 3]);
            train.setClassIndex(train.numAttributes() - 1);
            test.setClassIndex(test.numAttributes() - 1);
            Classifier clf = make(method, seed);
            long t0 = System.nanoTime();
            clf.buildClassifier(train);
            long t1 = System.nanoTime();
            double[][] dist = new double[test.numInstances()][];
            for (int i = 0; i < test.numInstances(); i++) {
                dist[i] = clf.distributionForInstance(test.instance(i));
            }
            long t2 = System.nanoTime();
            try (PrintWriter out = new PrintWriter(new FileWriter(args[a + 4] + ".tmp"))) {
                out.printf(Locale.ROOT, "# train_s=%.6f test_s=%.6f%n", (t1 - t0) / 1e9, (t2 - t1) / 1e9);
                for (double[] d : dist) {
                    StringBuilder sb = new StringBuilder();
                    for (int c = 0; c < d.length; c++) {
                        if (c > 0) sb.append(',');
                        sb.append(Double.toString(d[c]));
                    }
                    out.println(sb);
                }
            }
            new java.io.File(args[a + 4] + ".tmp").renameTo(new java.io.File(args[a + 4]));
        }
    }
}
