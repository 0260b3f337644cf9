package weka.classifiers.bayes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import weka.classifiers.bayes.hdpbnc.ModelFile;
import weka.classifiers.bayes.hdpbnc.NetworkDrawing;
import weka.classifiers.bayes.hdpbnc.TestFiles;
import weka.classifiers.bayes.net.BIFReader;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * Beyond the golden files: Python trains ten more models (every structure and estimator, the four
 * tyings, equal-width cut points, missing values, a separate test set with unseen values, a model
 * without trees, attribute types that differ between training and test data) with src/test/resources/parity_models.py, and Java predicts the same probabilities
 * to 1e-9 for every row, through the classifier.
 */
class ParityIT {

  @Test
  void javaPredictsWhatPythonPredicts(@TempDir Path out) throws Exception {
    PythonSide.assumeHdpPlugin();
    Path script = Paths.get("src", "test", "resources", "parity_models.py").toAbsolutePath();
    ProcessBuilder pb = new ProcessBuilder(PythonSide.python(), script.toString(), TestFiles.repo().toString(),
      out.toString());
    pb.redirectError(ProcessBuilder.Redirect.INHERIT);
    Process p = pb.start();
    p.getOutputStream().close();
    String listing = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), listing);
    int cases = 0;
    for (String line : listing.split("\\R")) {
      if (line.isEmpty()) {
        continue;
      }
      String[] f = line.split("\t");
      String name = f[0];
      Instances train = DataSource.read(f[1]);
      train.setClass(train.attribute(f[3]));
      Instances test = DataSource.read(f[2]);
      test.setClass(test.attribute(f[3]));
      HDPBayesNet c = new HDPBayesNet();
      c.setModel(ModelFile.read(out.resolve(name + ".hdpbnc")), test); // the header of the data predicted
      List<String> rows = Files.readAllLines(out.resolve(name + ".proba.csv"));
      String[] head = rows.get(0).split(",");
      assertEquals(test.numInstances(), rows.size() - 1, name);
      for (int i = 0; i < test.numInstances(); i++) {
        String[] v = rows.get(i + 1).split(",");
        double[] dist = c.distributionForInstance(test.instance(i));
        for (int y = 1; y < head.length; y++) {
          int w = test.classAttribute().indexOfValue(head[y].substring(2));
          assertEquals(Double.parseDouble(v[y]), dist[w], 1e-9, name + " row " + i + " " + head[y]);
        }
      }
      assertTrue(c.toString().contains("Structure: "), c.toString());
      BIFReader bif = new BIFReader().processString(c.graph());
      // the graph: the class and the attributes drawn, and a node "+N more" if the network has more
      int drawn = NetworkDrawing.drawnTrees(c.getModel().member(0)).length;
      int trees = c.getModel().numTrees();
      assertEquals(Integer.parseInt(f[4]), trees, name);
      assertEquals(1 + drawn + (drawn < trees ? 1 : 0), bif.getNrOfNodes(), name);
      cases++;
    }
    assertEquals(11, cases, listing);
  }
}
